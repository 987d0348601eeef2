// `ampc compile` (graph -> plan) and `ampc run` (inference on a batch stream).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "llvm/Support/Path.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Metrics.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Progress.h"
#include "tools/ampc/ScheduleFlags.h"

using namespace mlir;

namespace ampc::cli {
namespace {

/// True for a JSON file whose "format" is "ampc.plan".
bool isPlanFile(const std::string &path) {
  if (llvm::sys::path::extension(path) != ".json")
    return false;
  std::ifstream in(path);
  char head[256] = {};
  in.read(head, sizeof head - 1);
  return std::string(head).find("\"ampc.plan\"") != std::string::npos;
}

/// Loads a graph, runs the AMP pipeline (or the training pipeline) and
/// lowers it for `target` (with `probes`); or loads a plan. A forward
/// graph's cross entropy takes `weighting` (`ampc run --ignore-index`,
/// `--class-weights`).
rt::Plan planFor(const std::string &in, const AmpSettings &settings, const rt::Target &target,
                 const FusionSet &fusions, const TrainSettings *training = nullptr,
                 ProbeOptions probes = {}, const CrossEntropyWeighting &weighting = {}) {
  if (isPlanFile(in))
    return rt::loadPlan(in);
  MLIRContext ctx;
  OwningOpRef<ModuleOp> module = loadGraph(ctx, in);
  applyCrossEntropyWeighting(*module, weighting);
  if (training)
    runTrainingPipeline(*module, settings, *training);
  else
    runAmpPipeline(*module, settings);
  return lowerToPlan(*module, target, {probes, fusions});
}

std::string summary(const rt::Buffer &b, const std::vector<float> &v) {
  double sum = 0;
  float lo = INFINITY, hi = -INFINITY;
  for (float x : v) {
    sum += x;
    lo = std::min(lo, x);
    hi = std::max(hi, x);
  }
  std::string shape;
  for (size_t i = 0; i < b.shape.size(); ++i)
    shape += (i ? "," : "") + std::to_string(b.shape[i]);
  char line[256];
  std::snprintf(line, sizeof line, "  %s %s[%s]: mean %.6g, min %.6g, max %.6g", b.name.c_str(),
                rt::dtypeName(b.dtype), shape.c_str(), v.empty() ? 0.0 : sum / v.size(),
                lo, hi);
  return line;
}

} // namespace

double printProfile(const rt::Profile &profile, const char *per, int64_t count) {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0, amp = 0;
  for (const auto &[kernel, ms] : profile.kernelMs) {
    rows.push_back({ms, kernel});
    total += ms;
    const rt::KernelTraits *traits = rt::findKernelTraits(kernel);
    if (traits && traits->has(rt::kAmpBookkeeping))
      amp += ms;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::printf("time per %s by kernel:\n", per);
  for (const auto &[ms, kernel] : rows)
    std::printf("  %-32s %9.3f ms %5.1f%%\n", kernel.c_str(), ms / std::max<int64_t>(count, 1),
                total > 0 ? 100 * ms / total : 0.0);
  double outside = profile.runMs - total;
  std::printf("outside kernels (dispatch): %.2f%% of the run time\n",
              profile.runMs > 0 ? 100 * outside / profile.runMs : 0.0);
  return total > 0 ? amp / total : 0;
}

int runCompile(const Args &args) {
  const std::string &in = inputFile(args);
  std::string out = outputFile(args);
  AmpSettings settings = ampOptionsFrom(args);
  rt::Plan plan = onFile(in, [&] {
    const rt::Target &target = targetFrom(args);
    if (!args.has("train"))
      return planFor(in, settings, target, fusionsFrom(args, nullptr));
    TrainSettings training = trainSettingsFrom(args);
    if (withTrainingConfig(args).get("lr-schedule").value_or("") == kPlateauSchedule)
      throw UsageError(std::string("--lr-schedule ") + kPlateauSchedule +
                       " is ampc train's: it cuts the step's lr input between steps when its "
                       "evaluations stop improving; compile a constant rate (the default) and "
                       "give ampc-plan-run --lr");
    FusionSet fusions = fusionsFrom(args, &training);
    ProbeOptions probes;
    if (args.has("check-numerics"))
      probes = {ProbeOptions::Mode::NonFinite, settings.lowDtype()};
    return planFor(in, settings, target, fusions, &training, probes);
  });
  onFile(out, [&] { writeFileAtomically(out, rt::planToJson(plan)); });
  return 0;
}

/// `--weights FILE`'s values for every param of `ex`'s (forward) plan.
static void loadWeightsFrom(const Args &args, rt::Executor &ex) {
  std::vector<std::string> files = args.getFiles("weights");
  if (files.empty()) {
    if (args.has("init-layout"))
      throw UsageError("--init-layout says how --weights lays out Linear weights: give --weights");
    if (args.has("ema"))
      throw UsageError("--ema runs the weight averages of the --weights checkpoint: give "
                       "--weights");
    return;
  }
  loadWeightFiles(args, files, ex, "weights file");
}

/// `ampc run --inputs IN.safetensors [--outputs OUT.safetensors]`: one
/// forward pass on the given inputs, every graph output written by name.
static int runOnInputs(const Args &args, const std::string &in, const AmpSettings &settings) {
  for (const char *other : {"data", "steps", "batch"})
    if (args.has(other))
      throw UsageError(std::string("--inputs feeds one batch: leave out --") + other);
  std::string inputs = args.getFile("inputs"), outputs = args.getFile("outputs");
  if (inputs.empty())
    throw UsageError("--outputs needs --inputs (the values to run on)");
  checkOutput(args, "outputs");
  std::string device = deviceFrom(args);
  rt::Plan plan = onFile(in, [&] {
    return planFor(in, settings, rt::targetOfDevice(device), fusionsFrom(args, nullptr), nullptr,
                   {}, crossEntropyWeightingFrom(args));
  });
  rt::Executor ex(plan, {/*training=*/false, (uint64_t)args.getInt("seed", 0, 0),
                         /*profile=*/false, device, !args.has("no-cuda-graph"), nullptr,
                         args.has("tune-gemms")});
  loadWeightsFrom(args, ex);
  onFile(inputs, [&] { rt::loadInputs(rt::readSafetensors(inputs, "inputs file"), ex); });
  onFile(in, [&] { ex.run(); });
  if (!outputs.empty()) {
    onFile(outputs, [&] { rt::saveBuffers(outputs, ex, plan.outputs, {}, "outputs"); });
    return 0;
  }
  for (int id : plan.outputs)
    std::printf("%s\n", summary(plan.buffers[id], ex.readF32(id)).c_str());
  return 0;
}

int runRun(const Args &args) {
  const std::string &in = inputFile(args);
  checkInput(args);
  AmpSettings settings = ampOptionsFrom(args);
  if (args.has("inputs") || args.has("outputs"))
    return runOnInputs(args, in, settings);
  return onFile(in, [&] {
    rt::RunOptions options;
    options.device = deviceFrom(args);
    checkOutput(args, "metrics-json");
    options.data = args.get("data").value_or("synthetic");
    options.seed = args.getInt("seed", 0, 0);
    options.profile = args.has("profile");
    options.graphs = !args.has("no-cuda-graph");
    options.tuneGemms = args.has("tune-gemms");
    options.reports = Progress::updatesPerRun();
    if (args.has("steps"))
      options.steps = args.getInt("steps", 0);
    rt::Plan plan = planFor(in, settings, rt::targetOfDevice(options.device),
                            fusionsFrom(args, nullptr), nullptr, {},
                            crossEntropyWeightingFrom(args));
    rt::Runner runner(plan, options);
    loadWeightsFrom(args, runner.executor());
    if (args.has("batch") && args.getInt("batch", 0) != runner.batchSize())
      throw UsageError("the graph takes batches of " + std::to_string(runner.batchSize()) +
                       "; build it for " + *args.get("batch") +
                       " (for a zoo model: ampc model NAME --set batch=" + *args.get("batch") + ")");
    std::unique_ptr<Progress> progress;
    rt::RunResult r = runner.run([&](const rt::RunProgress &p) {
      if (!progress)
        progress = std::make_unique<Progress>("run", p.totalBatches);
      char status[96];
      int n = std::snprintf(status, sizeof status, "%.2f ms/batch", p.batchMs);
      if (p.loss) // a graph without a loss has none to show (not "nan")
        std::snprintf(status + n, sizeof status - n, " loss %.4g", *p.loss);
      progress->update(p.batch, status);
    });
    if (progress)
      progress->finish();
    std::printf("%s: %lld batches of %lld, %.3f ms/batch (median), %.1f samples/s, "
                "peak %lld bytes\n",
                plan.name.c_str(), (long long)r.steps, (long long)r.batch, r.msMedian,
                r.samplesPerS, (long long)plan.peakBytes());
    if (r.loss)
      std::printf("loss: %.6g\n", *r.loss);
    if (r.meanLoss) { // a token model's perplexity is e to its mean cross entropy
      std::printf("mean loss: %.6g over %lld batches", *r.meanLoss, (long long)r.steps);
      if (options.data.rfind("tokens:", 0) == 0)
        std::printf(", perplexity %.4g", std::exp(*r.meanLoss));
      std::printf("\n");
    }
    if (r.accuracy)
      std::printf("accuracy: %.4f\n", *r.accuracy);
    if (options.profile)
      printProfile(runner.executor().profile(), "batch", r.steps);
    std::printf("outputs of the last batch:\n");
    for (int id : plan.outputs)
      std::printf("%s\n", summary(plan.buffers[id], runner.executor().readF32(id)).c_str());
    if (auto file = args.get("metrics-json")) {
      writeFileAtomically(*file, rt::dumpJson(rt::runMetrics(plan, options, r), 2) + "\n");
    }
    return 0;
  });
}

} // namespace ampc::cli
