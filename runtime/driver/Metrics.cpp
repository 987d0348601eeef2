#include "runtime/driver/Metrics.h"

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

} // namespace

Json runMetrics(const Plan &plan, const RunOptions &options, const RunResult &r) {
  Json m = {{"command", "run"},
            {"steps", r.steps},
            {"batch", r.batch},
            {"step_ms_median", r.msMedian},
            {"samples_per_s", r.samplesPerS}};
  addPlanAndDevice(m, plan, options.device, r.deviceName, r.devicePeakBytes, r.hostSyncsPerStep,
                   r.stagingWaitsPerStep);
  m["final_loss"] = r.loss ? Json(*r.loss) : Json(nullptr);
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
  }
  return m;
}

} // namespace ampc::rt
