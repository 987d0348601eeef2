// `ampc train`: compiles a training step (AMP, autodiff, loss scaling,
// optimizer) and runs the training loop on the CPU runtime.
#include <algorithm>
#include <cmath>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/Trainer.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Progress.h"

using namespace mlir;

namespace ampc::cli {
namespace {

double getDouble(const Args &args, const std::string &name, double dflt) {
  auto v = args.get(name);
  if (!v)
    return dflt;
  size_t used = 0;
  double d = 0;
  try {
    d = std::stod(*v, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != v->size() || !std::isfinite(d) || d < 0)
    throw UsageError("option '--" + name + "' needs a non-negative number, got '" + *v + "'");
  return d;
}

} // namespace

TrainSettings trainSettingsFrom(const Args &args) {
  TrainSettings s;
  s.lossScaling = args.get("loss-scaling").value_or("");
  if (!s.lossScaling.empty() && s.lossScaling != "dynamic" && s.lossScaling != "static" &&
      s.lossScaling != "none")
    throw UsageError("--loss-scaling must be dynamic, static or none, got '" + s.lossScaling + "'");
  s.initLossScaling = getDouble(args, "init-loss-scaling", s.initLossScaling);
  s.incrEveryNSteps = args.getInt("incr-every-n-steps", s.incrEveryNSteps);
  s.decrEveryNNanOrInf = args.getInt("decr-every-n-nan-or-inf", s.decrEveryNNanOrInf);
  s.incrRatio = getDouble(args, "incr-ratio", s.incrRatio);
  s.decrRatio = getDouble(args, "decr-ratio", s.decrRatio);
  s.accumulate = args.getInt("accumulate", 1);
  s.optimizer = args.get("optimizer").value_or("sgd");
  if (s.optimizer != "sgd" && s.optimizer != "momentum" && s.optimizer != "adam" &&
      s.optimizer != "adamw")
    throw UsageError("--optimizer must be sgd, momentum, adam or adamw, got '" + s.optimizer + "'");
  s.weightDecay = args.has("weight-decay") ? getDouble(args, "weight-decay", 0) : -1.0;
  for (const std::string &stage : args.getAll("print-ir-after")) {
    if (stage != "amp" && stage != "autodiff" && stage != "loss-scaling" && stage != "optimizer")
      throw UsageError("--print-ir-after takes amp, autodiff, loss-scaling or optimizer, got '" +
                       stage + "'");
    s.printIrAfter.push_back(stage);
  }
  return s;
}

std::vector<OptionSpec> trainingOptionSpecs() {
  return {{"optimizer", true, false, "sgd (default), momentum, adam or adamw"},
          {"weight-decay", true, false, "decoupled weight decay (adamw: 0.01)"},
          {"loss-scaling", true, false, "dynamic, static or none (default: dynamic for f16)"},
          {"init-loss-scaling", true, false, "initial loss scale (65536)"},
          {"incr-every-n-steps", true, false, "finite steps before the scale grows (2000)"},
          {"decr-every-n-nan-or-inf", true, false, "non-finite steps before it shrinks (1)"},
          {"incr-ratio", true, false, "growth factor (2)"},
          {"decr-ratio", true, false, "backoff factor (0.5)"},
          {"accumulate", true, false, "micro-batches per optimizer step (1)"},
          {"print-ir-after", true, true, "prints the IR after amp|autodiff|loss-scaling|optimizer"}};
}

int runTrain(const Args &args) {
  const std::string &in = inputFile(args);
  AmpSettings amp = ampOptionsFrom(args);
  TrainSettings settings;
  rt::TrainOptions options;
  onFile(in, [&] {
    checkDevice(args);
    settings = trainSettingsFrom(args);
    options.data = args.get("data").value_or("synthetic");
    options.steps = args.getInt("steps", 0);
    options.epochs = args.getInt("epochs", 1);
    options.lr = getDouble(args, "lr", 0.01);
    options.seed = args.getInt("seed", 0, 0);
    options.accumulate = settings.accumulate;
    options.checkpoint = args.get("checkpoint").value_or("");
    options.resume = args.get("resume").value_or("");
    options.profile = args.has("profile");
  });
  rt::Plan trainPlan, evalPlan;
  onFile(in, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> forward = loadGraph(ctx, in);
    OwningOpRef<ModuleOp> training = forward->clone();
    runAmpPipeline(*forward, amp);
    evalPlan = lowerToPlan(*forward);
    runTrainingPipeline(*training, amp, settings);
    trainPlan = lowerToPlan(*training);
  });
  onFile(in, [&] {
    if (!args.has("batch"))
      return;
    int64_t batch = args.getInt("batch", 1);
    for (int id : trainPlan.inputs)
      if (!trainPlan.buffers[id].shape.empty() && trainPlan.buffers[id].shape[0] != batch)
        throw UsageError("the graph takes batches of " +
                         std::to_string(trainPlan.buffers[id].shape[0]) + "; build it for " +
                         std::to_string(batch) + " (for a zoo model: ampc model NAME --set batch=" +
                         std::to_string(batch) + ")");
  });
  rt::TrainResult result = onFile(in, [&] {
    rt::Trainer trainer(trainPlan, evalPlan, options);
    std::unique_ptr<Progress> bar;
    rt::TrainResult r = trainer.run([&](const rt::TrainProgress &p) {
      if (!bar)
        bar = std::make_unique<Progress>("train", p.totalSteps);
      char status[128];
      std::snprintf(status, sizeof status, "loss %.4f  scale %g  %.1f ms/step  skipped %lld",
                    p.loss, p.lossScale, p.stepMs, (long long)p.skipped);
      bar->update(p.step, status);
    });
    if (bar)
      bar->finish();
    return r;
  });
  std::printf("%s: %lld steps of %lld x %lld samples, %.3f ms/step (median), %.1f samples/s, "
              "peak %lld bytes\n",
              trainPlan.name.c_str(), (long long)result.steps, (long long)settings.accumulate,
              (long long)result.batch, result.stepMsMedian, result.samplesPerS,
              (long long)result.peakBytes);
  std::printf("final loss: %.6g\nloss scale: %g (%s), skipped steps: %lld\n", result.finalLoss,
              result.lossScale, lossScalingMode(amp, settings).c_str(),
              (long long)result.skipped);
  if (result.evalAccuracy)
    std::printf("eval accuracy: %.4f\n", *result.evalAccuracy);
  double ampShare = 0;
  if (options.profile) {
    std::vector<std::pair<double, std::string>> rows;
    double total = 0, amp = 0;
    for (const auto &[kernel, ms] : result.profile) {
      rows.push_back({ms, kernel});
      total += ms;
      if (kernel == "cast" || kernel == "check_finite_and_unscale" || kernel == "check_finite" ||
          kernel == "update_loss_scaling")
        amp += ms;
    }
    ampShare = total > 0 ? amp / total : 0;
    std::sort(rows.rbegin(), rows.rend());
    std::printf("time per step by kernel:\n");
    for (const auto &[ms, kernel] : rows)
      std::printf("  %-32s %9.3f ms %5.1f%%\n", kernel.c_str(),
                  ms / std::max<int64_t>(result.steps, 1), total > 0 ? 100 * ms / total : 0.0);
    std::printf("casts, finite check and scale update: %.2f%% of the step\n", 100 * ampShare);
  }
  if (auto file = args.get("metrics-json")) {
    Json m = {{"command", "train"},
              {"graph", trainPlan.name},
              {"steps", result.steps},
              {"batch", result.batch},
              {"accumulate", settings.accumulate},
              {"step_ms_median", result.stepMsMedian},
              {"samples_per_s", result.samplesPerS},
              {"final_loss", result.finalLoss},
              {"loss_scale", result.lossScale},
              {"skipped_steps", result.skipped},
              {"peak_bytes", result.peakBytes},
              {"arena_bytes", trainPlan.arenaBytes},
              {"persistent_bytes", trainPlan.persistentBytes}};
    if (result.evalAccuracy)
      m["eval_accuracy"] = *result.evalAccuracy;
    if (options.profile)
      m["amp_overhead_share"] = ampShare;
    onFile(*file, [&] { writeFileAtomically(*file, m.dump(2) + "\n"); });
  }
  return 0;
}

} // namespace ampc::cli
