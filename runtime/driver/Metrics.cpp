#include "runtime/driver/Metrics.h"

#include <algorithm>
#include <set>

#include "runtime/core/KernelTraits.h"

namespace ampc::rt {
namespace {

/// What every metrics file holds about the plan and the device.
void addPlanAndDevice(Json &m, const Plan &plan, const std::string &device,
                      const std::string &deviceName, int64_t devicePeakBytes,
                      double hostSyncsPerStep, double stagingWaitsPerStep) {
  m["graph"] = plan.name;
  m["device"] = device;
  m["device_name"] = deviceName;
  m["peak_bytes"] = plan.peakBytes();
  m["arena_bytes"] = plan.arenaBytes;
  m["persistent_bytes"] = plan.persistentBytes;
  m["device_peak_bytes"] = devicePeakBytes;
  m["host_syncs_per_step"] = hostSyncsPerStep;
  m["staging_waits_per_step"] = stagingWaitsPerStep;
}

/// FLOPs of one step whose kernel's FLOP rule is `rule`; else 0.
double stepFlops(const Plan &plan, const Step &s, FlopRule rule) {
  const KernelTraits *traits = &traitsOf(s.kernel);
  if (!traits || traits->flops != rule)
    return 0;
  std::vector<std::vector<int64_t>> in, out;
  for (int id : s.inputs)
    in.push_back(plan.buffers[id].shape);
  for (int id : s.outputs)
    out.push_back(plan.buffers[id].shape);
  return kernelFlops(*traits, in, out,
                     {s.attrs.value("transpose_a", false), s.attrs.value("causal", false)});
}

/// FLOPs of one run of the plan's GEMM steps (matmul, matmul_bias).
double gemmFlops(const Plan &plan) {
  double flops = 0;
  for (const Step &s : plan.steps)
    flops += stepFlops(plan, s, FlopRule::Matmul);
  return flops;
}

/// The launches that took longest, each with the bytes its steps read and
/// write (every distinct operand read once, every result written once: the
/// least traffic the launch could have) and the rates it reached, so that a
/// profile says which kernels sit far from the memory's bandwidth or the
/// tensor cores' peak.
Json slowestLaunches(const Plan &plan, const Profile &profile, double runs, size_t count) {
  std::vector<std::pair<size_t, Profile::Launch>> launches(profile.launchMs.begin(),
                                                           profile.launchMs.end());
  std::sort(launches.begin(), launches.end(),
            [](const auto &x, const auto &y) { return x.second.ms > y.second.ms; });
  launches.resize(std::min(launches.size(), count));
  Json rows = Json::array();
  for (const auto &[first, launch] : launches) {
    std::set<int> read, written;
    double flops = 0;
    for (size_t i = first; i < launch.end && i < plan.steps.size(); ++i) {
      const Step &s = plan.steps[i];
      read.insert(s.inputs.begin(), s.inputs.end());
      written.insert(s.outputs.begin(), s.outputs.end());
      for (FlopRule rule : {FlopRule::Matmul, FlopRule::Conv, FlopRule::ConvBackwardInput,
                            FlopRule::ConvBackwardFilter})
        flops += stepFlops(plan, s, rule);
    }
    double bytes = 0;
    for (const std::set<int> *ids : {&read, &written})
      for (int id : *ids)
        bytes += (double)plan.buffers[id].bytes;
    double ms = launch.ms / runs;
    Json row = {{"step", first < plan.steps.size() ? plan.steps[first].name : ""},
                {"kernel", first < plan.steps.size() ? kernelName(plan.steps[first].kernel) : ""},
                {"steps", launch.end - first},
                {"ms", ms},
                {"bytes", bytes},
                {"gb_per_s", ms > 0 ? bytes / (ms * 1e6) : 0.0}};
    if (flops > 0)
      row["tflops"] = ms > 0 ? flops / (ms * 1e9) : 0.0;
    rows.push_back(std::move(row));
  }
  return rows;
}

} // namespace

Json profileMetrics(const Plan &plan, const Profile &profile) {
  double runs = std::max<double>(profile.runs, 1), total = 0, amp = 0, gemmMs = 0;
  Json perKernel = Json::object();
  for (const auto &[kernel, ms] : profile.kernelMs) {
    perKernel[kernel] = ms / runs;
    total += ms;
    const KernelTraits *traits = findKernelTraits(kernel);
    if (traits && traits->has(kAmpBookkeeping))
      amp += ms;
    if (traits && traits->flops == FlopRule::Matmul)
      gemmMs += ms;
  }
  Json perStep = Json::object(); // every launch, by its first step's name
  for (const auto &[first, launch] : profile.launchMs)
    if (first < plan.steps.size())
      perStep[plan.steps[first].name] = launch.ms / runs;
  return {{"kernel_ms_per_step", perKernel},
          {"launch_ms_per_step", perStep},
          {"kernels_ms_per_step", total / runs},
          {"run_ms_per_step", profile.runMs / runs},
          {"amp_bookkeeping_share", total > 0 ? amp / total : 0.0},
          {"gemm_ms_per_step", gemmMs / runs},
          {"gemm_tflops", gemmMs > 0 ? gemmFlops(plan) * runs / (gemmMs * 1e9) : 0.0},
          {"slowest_launches", slowestLaunches(plan, profile, runs, 24)}};
}

Json runMetrics(const Plan &plan, const RunOptions &options, const RunResult &r) {
  Json m = {{"command", "run"},
            {"steps", r.steps},
            {"batch", r.batch},
            {"step_ms_median", r.msMedian},
            {"samples_per_s", r.samplesPerS}};
  addPlanAndDevice(m, plan, options.device, r.deviceName, r.devicePeakBytes, r.hostSyncsPerStep,
                   r.stagingWaitsPerStep);
  m["final_loss"] = r.loss ? Json(*r.loss) : Json(nullptr);
  if (r.meanLoss)
    m["mean_loss"] = *r.meanLoss;
  if (r.accuracy) {
    m["eval_accuracy"] = *r.accuracy;
    m["eval_samples"] = r.samples;
  }
  return m;
}

Json trainMetrics(const Plan &plan, const TrainOptions &options, const TrainResult &r) {
  Json m = {{"command", "train"},
            {"steps", r.steps},
            {"batch", r.batch},
            {"accumulate", options.accumulate},
            {"step_ms_median", r.stepMsMedian},
            {"samples_per_s", r.samplesPerS},
            {"final_loss", r.finalLoss},
            {"loss_scale", r.lossScale},
            {"skipped_steps", r.skipped},
            {"world_size", r.worldSize},
            {"allreduce_bytes_per_step", r.allreduceBytesPerStep}};
  addPlanAndDevice(m, plan, options.device, r.deviceName, r.devicePeakBytes, r.hostSyncsPerStep,
                   r.stagingWaitsPerStep);
  if (r.evalAccuracy) {
    m["eval_accuracy"] = *r.evalAccuracy;
    m["eval_samples"] = r.evalSamples;
  } else if (!r.evalNote.empty()) {
    m["eval_note"] = r.evalNote; // why there is no accuracy
  }
  if (!r.evals.empty() && r.evals.back().emaAccuracy)
    m["ema_eval_accuracy"] = *r.evals.back().emaAccuracy;
  if (r.best)
    m["best"] = {{"metric", options.bestMetric}, {"value", r.best->value}, {"step", r.best->step}};
  if (r.stoppedAt)
    m["stopped_early_at"] = r.stoppedAt;
  if (options.profile)
    m["profile"] = profileMetrics(plan, r.profile);
  Json history = Json::array();
  for (const StepRecord &s : r.history) {
    Json row = {{"step", s.step}, {"loss", s.loss}, {"lr", s.lr}};
    row["loss_scale"] = s.lossScale ? *s.lossScale : 1.0; // no scaling: 1
    row["skipped"] = s.skipped;
    if (s.gradNorm)
      row["grad_norm"] = *s.gradNorm;
    history.push_back(std::move(row));
  }
  m["history"] = std::move(history);
  Json evals = Json::array();
  for (const EvalRecord &e : r.evals) {
    Json row = {{"step", e.step}};
    if (e.loss)
      row["val_loss"] = *e.loss;
    if (e.accuracy)
      row["val_accuracy"] = *e.accuracy;
    if (e.emaLoss)
      row["ema_val_loss"] = *e.emaLoss;
    if (e.emaAccuracy)
      row["ema_val_accuracy"] = *e.emaAccuracy;
    evals.push_back(std::move(row));
  }
  m["evals"] = std::move(evals);
  return m;
}

} // namespace ampc::rt
