// `ampc train`: compiles a training step (AMP, autodiff, loss scaling,
// optimizer) and runs the training loop on the CPU runtime.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/JsonText.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Metrics.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/NumericsAdvice.h"
#include "tools/ampc/Progress.h"
#include "tools/ampc/ScheduleFlags.h"

using namespace mlir;

namespace ampc::cli {

/// "a,b,..." as numbers; a UsageError naming `flag` for anything else.
static std::vector<double> numberList(const std::string &text, const std::string &flag) {
  std::vector<double> numbers;
  size_t at = 0;
  while (at <= text.size()) {
    size_t comma = std::min(text.find(',', at), text.size());
    std::string item = text.substr(at, comma - at);
    char *end = nullptr;
    double v = item.empty() ? NAN : std::strtod(item.c_str(), &end);
    if (item.empty() || *end || !std::isfinite(v))
      throw UsageError(flag + " takes numbers a,b,..., got '" + text + "'");
    numbers.push_back(v);
    at = comma + 1;
  }
  return numbers;
}

CrossEntropyWeighting crossEntropyWeightingFrom(const Args &args) {
  CrossEntropyWeighting w;
  if (args.has("ignore-index"))
    w.ignoreIndex = args.getInt("ignore-index", 0, std::numeric_limits<int64_t>::min(),
                                std::numeric_limits<int64_t>::max());
  if (auto weights = args.get("class-weights"); weights && *weights == "balanced") {
    w.balanced = true; // counted from the training labels (balancedClassWeights)
  } else if (weights) {
    w.classWeights = numberList(*weights, "--class-weights");
    double total = 0;
    for (double v : w.classWeights) {
      if (v < 0 || v > 3.0e38)
        throw UsageError("--class-weights must be at least 0 (and f32), got '" + *weights + "'");
      total += v;
    }
    if (total == 0)
      throw UsageError("--class-weights weighs every class 0: nothing would be learned");
  }
  return w;
}

/// The training options of `args` (a config's keys among them).
static TrainSettings readTrainSettings(const Args &args) {
  TrainSettings s;
  s.lossScaling = args.get("loss-scaling").value_or("");
  if (!s.lossScaling.empty() && s.lossScaling != "dynamic" && s.lossScaling != "static" &&
      s.lossScaling != "none")
    throw UsageError("--loss-scaling must be dynamic, static or none, got '" + s.lossScaling + "'");
  // The scale is an f32 scalar: it starts finite and at least 1.
  s.initLossScaling = args.getNumber("init-loss-scaling", s.initLossScaling,
                                     std::numeric_limits<float>::min(),
                                     std::numeric_limits<float>::max());
  s.incrEveryNSteps = args.getInt("incr-every-n-steps", s.incrEveryNSteps);
  s.decrEveryNNanOrInf = args.getInt("decr-every-n-nan-or-inf", s.decrEveryNNanOrInf);
  s.incrRatio = args.getNumber("incr-ratio", s.incrRatio, 1, 1e6);
  s.decrRatio = args.getNumber("decr-ratio", s.decrRatio, 1e-6, 1);
  s.accumulate = args.getInt("accumulate", 1);
  s.optimizer = args.get("optimizer").value_or("sgd");
  static const char *optimizers[] = {"sgd",  "momentum", "adam",    "adamw",
                                     "lamb", "lion",     "rmsprop", "adagrad"};
  if (std::find(std::begin(optimizers), std::end(optimizers), s.optimizer) ==
      std::end(optimizers))
    throw UsageError("--optimizer must be sgd, momentum, adam, adamw, lamb, lion, rmsprop or "
                     "adagrad, got '" + s.optimizer + "'");
  s.weightDecay = args.has("weight-decay") ? args.getNumber("weight-decay", 0, 0, 1e6) : -1.0;
  bool rmsprop = s.optimizer == "rmsprop";
  if (args.has("momentum") && s.optimizer != "momentum" && !rmsprop)
    throw UsageError("--momentum is for --optimizer momentum or rmsprop");
  s.momentum = args.getNumber("momentum", rmsprop ? 0.0 : 0.9, 0, 1);
  if (rmsprop && s.momentum == 1.0)
    throw UsageError("--momentum for rmsprop must be in [0, 1), got 1");
  s.nesterov = args.has("nesterov");
  if (s.nesterov && s.optimizer != "momentum")
    throw UsageError("--nesterov is for --optimizer momentum");
  for (const char *flag : {"rmsprop-alpha", "rmsprop-centered"})
    if (args.has(flag) && !rmsprop)
      throw UsageError(std::string("--") + flag + " is for --optimizer rmsprop");
  s.rmspropAlpha = args.getNumber("rmsprop-alpha", 0.99, 0, 1);
  if (s.rmspropAlpha == 1.0) // the squares' average would never move
    throw UsageError("--rmsprop-alpha must be in [0, 1), got 1");
  s.rmspropCentered = args.has("rmsprop-centered");
  if (args.has("adagrad-init") && s.optimizer != "adagrad")
    throw UsageError("--adagrad-init is for --optimizer adagrad");
  s.adagradInit = args.getNumber("adagrad-init", 0.0, 0, 1e6);
  if (auto betas = args.get("adam-betas")) {
    std::vector<double> b = numberList(*betas, "--adam-betas");
    if (b.size() != 2 || !(b[0] >= 0 && b[0] < 1) || !(b[1] >= 0 && b[1] < 1))
      throw UsageError("--adam-betas takes two numbers in [0, 1), B1,B2, got '" + *betas + "'");
    s.beta1 = b[0], s.beta2 = b[1];
  }
  if (args.has("eps") && args.has("adam-eps"))
    throw UsageError("--adam-eps is --eps under its older name: give one");
  if (const char *flag = args.has("eps") ? "eps" : args.has("adam-eps") ? "adam-eps" : nullptr) {
    // Lion's step is a sign, SGD's no division: nothing to keep from dividing by 0.
    if (s.optimizer == "sgd" || s.optimizer == "momentum" || s.optimizer == "lion")
      throw UsageError(std::string("--") + flag +
                       " is for adam, adamw, lamb, rmsprop and adagrad: " + s.optimizer +
                       " has no epsilon");
    s.epsilon = args.getNumber(flag, 0, 0, 1);
    // Their denominators are sqrt(state) + eps with a state that starts at
    // (or can reach) 0: the update would be 0/0 (their ops refuse it).
    if (s.epsilon == 0 &&
        (s.optimizer == "lamb" || s.optimizer == "rmsprop" || s.optimizer == "adagrad"))
      throw UsageError(std::string("--") + flag + " must be above 0 with --optimizer " +
                       s.optimizer + " (a parameter whose gradient is 0 would divide 0 by 0); " +
                       "1e-6 to 1e-10 are usual");
  }
  s.noDecay1d = args.has("no-decay-1d");
  readLrSchedule(args, s);
  s.clipGradNorm = args.getNumber("clip-grad-norm", 0.0, 1e-12, 1e30);
  s.gradientCheckpointing = args.has("gradient-checkpointing");
  if (args.has("ema-decay")) {
    s.emaDecay = args.getNumber("ema-decay", 0.0, 0.0, 1.0);
    if (!(s.emaDecay > 0.0 && s.emaDecay < 1.0))
      throw UsageError("--ema-decay must be above 0 and below 1 (0.999 or 0.9999 are usual), "
                       "got " + *args.get("ema-decay"));
  }
  s.emaWarmup = args.has("ema-warmup");
  if (s.emaWarmup && !args.has("ema-decay"))
    throw UsageError("--ema-warmup warms up the average of --ema-decay D: give one");
  if (args.has("label-smoothing"))
    s.labelSmoothing = args.getNumber("label-smoothing", 0.0, 0.0, 1.0);
  s.weighting = crossEntropyWeightingFrom(args);
  for (auto [flag, patterns] : {std::pair{"freeze", &s.freeze}, {"train-only", &s.trainOnly},
                                {"lr-scale", &s.lrScales}})
    for (const std::string &value : args.getAll(flag))
      for (std::string &pattern : splitCommas(value))
        patterns->push_back(std::move(pattern));
  s.bucketMib = args.getNumber("bucket-mib", s.bucketMib, 1.0 / 1024, 1e6);
  s.worldSize = args.getInt("world-size", 1, 1, 1 << 20); // compile: the ranks to plan for
  for (const std::string &stage : args.getAll("print-ir-after")) {
    if (stage != "amp" && stage != "autodiff" && stage != "loss-scaling" &&
        stage != "data-parallel" && stage != "optimizer" && stage != "ema")
      throw UsageError("--print-ir-after takes amp, autodiff, loss-scaling, data-parallel, "
                       "optimizer or ema, got '" + stage + "'");
    s.printIrAfter.push_back(stage);
  }
  s.printIrFullConstants = args.has("print-ir-full-constants");
  return s;
}

TrainSettings trainSettingsFrom(const Args &given) {
  Args args = withTrainingConfig(given); // flags override the config
  try {
    return readTrainSettings(args);
  } catch (const UsageError &e) {
    rethrowNamingConfig(e, given, args);
  }
}

std::vector<OptionSpec> trainingOptionSpecs() {
  return {{"optimizer", true, false,
           "sgd (default), momentum, adam, adamw, lamb, lion, rmsprop or adagrad"},
          {"weight-decay", true, false, "L2 weight decay; decoupled for adamw, lamb and lion (adamw, lamb: 0.01)"},
          {"no-decay-1d", false, false, "biases and norm scales (rank <= 1) are not decayed"},
          {"momentum", true, false, "momentum, rmsprop: the momentum factor (0.9; rmsprop: 0)"},
          {"nesterov", false, false, "momentum: Nesterov's"},
          {"adam-betas", true, false, "adam, adamw, lamb, lion: B1,B2 (0.9,0.999; lion: 0.9,0.99)"},
          {"eps", true, false,
           "adam, adamw, lamb, rmsprop, adagrad: epsilon (1e-8; lamb: 1e-6; adagrad: 1e-10)"},
          {"adam-eps", true, false, "--eps under its older name"},
          {"rmsprop-alpha", true, false, "rmsprop: the squares' smoothing constant (0.99)"},
          {"rmsprop-centered", false, false,
           "rmsprop: divide by the gradient's estimated variance (PyTorch's centered=True)"},
          {"adagrad-init", true, false, "adagrad: the initial sum of squares (0; Keras: 0.1)"},
          {"lr-schedule", true, false,
           "constant (default), cosine, linear, onecycle, step, polynomial, "
           "cosine_with_restarts, inverse_sqrt, warmup_stable_decay or reduce_lr_on_plateau "
           "(cuts the rate when --best-metric stops improving)"},
          {"warmup-steps", true, false,
           "all but onecycle, step and reduce_lr_on_plateau: steps of linear warmup (0)"},
          {"min-lr", true, false,
           "cosine, linear, polynomial, cosine_with_restarts, warmup_stable_decay: the rate at "
           "the last step; reduce_lr_on_plateau: the lowest rate (0)"},
          {"lr-step-every", true, false, "step: steps between decays (1)"},
          {"lr-gamma", true, false, "step: the decay factor (0.1)"},
          {"lr-power", true, false, "polynomial: the power of the remaining share (1: linear)"},
          {"lr-cycles", true, false, "cosine_with_restarts: cosine decays, each from the peak (1)"},
          {"lr-decay-steps", true, false,
           "warmup_stable_decay: the last D steps decay to --min-lr (required)"},
          {"clip-grad-norm", true, false,
           "clips the unscaled gradients to this global L2 norm, in the finite check's pass"},
          {"ema-decay", true, false,
           "keeps a moving average of the trained weights with this decay (0.999, 0.9999): "
           "validated beside them, written by ampc weights --ema"},
          {"ema-warmup", false, false,
           "the average's decay warms up: min(D, (1 + n) / (10 + n)) after n steps"},
          {"gradient-checkpointing", false, false,
           "the backward recomputes the forward's activations segment by segment: less memory"},
          {"label-smoothing", true, false,
           "softmax_cross_entropy: the target's share spread over the classes, in [0, 1]"},
          {"ignore-index", true, false,
           "softmax_cross_entropy: rows with this label count for nothing (PyTorch: -100)"},
          {"class-weights", true, false,
           "softmax_cross_entropy: W0,W1,...: each class's weight, as PyTorch's weight=; "
           "balanced: counted from the training labels"},
          {"freeze", true, true,
           "params not trained, by name or module, globs allowed: embed,layers.0,*.bias"},
          {"train-only", true, true, "the params trained, by name or module: the rest are frozen"},
          {"lr-scale", true, true,
           "PATTERN=FACTOR,...: those params update at FACTOR times the rate (first match)"},

          {"loss-scaling", true, false, "dynamic, static or none (default: dynamic for f16)"},
          {"init-loss-scaling", true, false, "initial loss scale (65536)"},
          {"incr-every-n-steps", true, false, "finite steps before the scale grows (2000)"},
          {"decr-every-n-nan-or-inf", true, false, "non-finite steps before it shrinks (1)"},
          {"incr-ratio", true, false, "growth factor (2)"},
          {"decr-ratio", true, false, "backoff factor (0.5)"},
          {"accumulate", true, false, "micro-batches per optimizer step (1)"},
          {"bucket-mib", true, false, "data parallel: gradient bucket size in MiB (25)"},
          {"print-ir-after", true, true,
           "prints the IR after amp|autodiff|loss-scaling|data-parallel|optimizer|ema"},
          {"print-ir-full-constants", false, false,
           "IR dumps print constants of over 16 elements in full (elided by default)"}};
}

/// Whether mpirun (Open MPI, or a PMI launcher) started this process.
static bool launchedByMpirun() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"})
    if (std::getenv(var))
      return true;
  return false;
}

TrainJob compileTraining(const Args &args, ProbeOptions::Mode probeMode, MLIRContext &ctx,
                         OwningOpRef<ModuleOp> *forwardOut) {
  TrainJob job;
  job.in = inputFile(args);
  const std::string &in = job.in;
  job.amp = ampOptionsFrom(args);
  if (launchedByMpirun())
    job.communicator = onFile(in, [] { return rt::createCommunicator("mpi"); });
  ProbeOptions probes{probeMode, job.amp.lowDtype()};
  rt::TrainOptions &options = job.options;
  onFile(in, [&] {
    options.device = deviceFrom(args);
    options.reports = Progress::updatesPerRun();
    options.logEvery = args.getInt("log-every", 0, 1);
    options.valData = args.get("val-data").value_or("");
    options.evalEvery = args.getInt("eval-every", 0, 1);
    options.saveEvery = args.getInt("save-every", 0, 1);
    if (options.saveEvery && !args.has("checkpoint"))
      throw UsageError("--save-every writes the --checkpoint FILE: give one");
    options.saveBest = args.getFile("save-best");
    options.earlyStop = args.getInt("early-stop", 0, 1);
    options.bestMetric = args.get("best-metric").value_or("val_loss");
    if (!rt::isBestMetric(options.bestMetric))
      throw UsageError("--best-metric must be val_loss, val_accuracy, ema_val_loss or "
                       "ema_val_accuracy, got '" + options.bestMetric + "'");
    bool tracks = !options.saveBest.empty() || options.earlyStop > 0;
    if (args.has("best-metric") && !tracks &&
        args.get("lr-schedule").value_or("") != kPlateauSchedule)
      throw UsageError("--best-metric is what --save-best FILE, --early-stop N and --lr-schedule "
                       "reduce_lr_on_plateau follow: give one");
    if (!options.saveBest.empty() && options.saveBest == args.getFile("checkpoint"))
      throw UsageError("--save-best and --checkpoint name the same file: the best would be "
                       "overwritten by the last; give the best another name");
    if (tracks && !options.evalEvery)
      throw UsageError(std::string(options.saveBest.empty() ? "--early-stop" : "--save-best") +
                       " follows the evaluations of --eval-every N: give it");
    job.settings = trainSettingsFrom(args);
    options.plateau = plateauFrom(args);
    if (options.plateau && !options.evalEvery)
      throw UsageError(std::string("--lr-schedule ") + kPlateauSchedule +
                       " cuts the rate when the evaluations of --eval-every N stop improving: "
                       "give it");
    if (!job.printer()) // every rank compiles the same step: rank 0 alone prints it
      job.settings.printIrAfter.clear();
    job.fusions = fusionsFrom(args, &job.settings);
    options.settings = {{"level", job.amp.level},
                        {"dtype", job.amp.dtype},
                        {"optimizer", job.settings.optimizer},
                        {"loss-scaling", lossScalingMode(job.amp, job.settings)},
                        {"lr-schedule", options.plateau ? kPlateauSchedule
                                                        : job.settings.lrSchedule}};
    // A warmup is the schedule's too (under constant, its state).
    options.settings["warmup-steps"] =
        job.settings.warmupSteps ? std::to_string(job.settings.warmupSteps) : "";
    // Which params have optimizer state is the checkpoint's shape too.
    options.settings["freeze"] = joinCommas(job.settings.freeze);
    options.settings["train-only"] = joinCommas(job.settings.trainOnly);
    // The weight averages are the checkpoint's too, and how they move.
    char decay[32] = "";
    if (job.settings.emaDecay > 0) // 0.999 and 0.9990 are one setting
      std::snprintf(decay, sizeof decay, "%.10g", job.settings.emaDecay);
    options.settings["ema-decay"] = decay;
    options.settings["ema-warmup"] = job.settings.emaWarmup ? "on" : "";
    if (job.amp.usesFp8()) // the amax histories' length is the checkpoint's shape
      options.settings["fp8-amax-history"] = std::to_string(job.amp.fp8.amaxHistory);
    options.data = args.get("data").value_or("synthetic");
    options.steps = args.getInt("steps", 0);
    options.epochs = args.getInt("epochs", 1);
    options.lr = args.getNumber("lr", 0.01, 0, 1e6);
    options.lrTotalSteps = args.getInt("lr-total-steps", 0, 1);
    options.seed = args.getInt("seed", 0, 0);
    options.accumulate = job.settings.accumulate;
    options.checkpoint = args.getFile("checkpoint");
    options.resume = args.getFile("resume");
    options.initFrom = args.getFiles("init-from");
    options.initLayout = weightLayoutFrom(args);
    checkInput(args);
    checkOutput(args, "metrics-json");
    checkOutput(args, "save-best");
    options.profile = args.has("profile");
    options.graphs = !args.has("no-cuda-graph");
    options.tuneGemms = args.has("tune-gemms");
    options.checkNumerics = probes.mode == ProbeOptions::Mode::NonFinite;
    if (job.communicator) { // on --device cuda, the backend makes NCCL's from it
      options.communicator = job.communicator.get();
      job.settings.worldSize = job.communicator->size();
    }
  });
  onFile(in, [&] {
    OwningOpRef<ModuleOp> forward = loadGraph(ctx, in);
    CrossEntropyWeighting &weighting = job.settings.weighting;
    if (weighting.balanced) {
      weighting.classWeights = balancedClassWeights(*forward, options.data, weighting.ignoreIndex);
      if (job.printer()) { // to give `ampc run --class-weights` the same
        std::string list;
        for (double w : weighting.classWeights) {
          char item[32];
          std::snprintf(item, sizeof item, "%s%.6g", list.empty() ? "" : ",", w);
          list += item;
        }
        std::printf("class weights, balanced over %s's labels: %s\n", options.data.c_str(),
                    list.c_str());
      }
    }
    applyCrossEntropyWeighting(*forward, weighting); // validation: the same rows
    job.userValues = userValueNames(*forward);
    OwningOpRef<ModuleOp> training = forward->clone();
    runAmpPipeline(*forward, job.amp);
    rt::Target target = rt::targetOfDevice(options.device);
    job.evalPlan = lowerToPlan(*forward, target, job.fusions);
    runTrainingPipeline(*training, job.amp, job.settings);
    job.trainPlan = lowerToPlan(*training, target, {probes, job.fusions});
    if (forwardOut)
      *forwardOut = std::move(forward);
  });
  onFile(in, [&] {
    if (!args.has("batch"))
      return;
    int64_t batch = args.getInt("batch", 1);
    for (int id : job.trainPlan.inputs)
      if (!job.trainPlan.buffers[id].shape.empty() &&
          job.trainPlan.buffers[id].shape[0] != batch)
        throw UsageError("the graph takes batches of " +
                         std::to_string(job.trainPlan.buffers[id].shape[0]) + "; build it for " +
                         std::to_string(batch) + " (for a zoo model: ampc model NAME --set batch=" +
                         std::to_string(batch) + ")");
  });
  return job;
}

rt::TrainResult runTraining(const TrainJob &job, const char *label) {
  return onFile(job.in, [&] {
    rt::Trainer trainer(job.trainPlan, job.evalPlan, job.options);
    std::unique_ptr<Progress> bar;
    auto report = [&](const rt::TrainProgress &p) {
      if (!bar)
        bar = std::make_unique<Progress>(label, p.totalSteps);
      char status[128];
      std::snprintf(status, sizeof status, "loss %.4f  scale %g  %.1f ms/step  skipped %lld",
                    p.loss, p.lossScale, p.stepMs, (long long)p.skipped);
      bar->update(p.step, status);
    };
    rt::TrainResult r = job.printer() ? trainer.run(report) : trainer.run();
    if (bar)
      bar->finish();
    return r;
  });
}

int runTrain(const Args &args) {
  MLIRContext ctx;
  TrainJob job = compileTraining(args,
                                 args.has("check-numerics") ? ProbeOptions::Mode::NonFinite
                                                            : ProbeOptions::Mode::None,
                                 ctx);
  const rt::Plan &trainPlan = job.trainPlan;
  const rt::TrainOptions &options = job.options;
  rt::TrainResult result = runTraining(job, "train");
  if (!job.printer())
    return 0; // rank 0 reports for every rank
  std::printf("%s: %lld steps of %lld x %lld samples, %.3f ms/step (median), %.1f samples/s, "
              "peak %lld bytes\n",
              trainPlan.name.c_str(), (long long)result.steps, (long long)options.accumulate,
              (long long)result.batch, result.stepMsMedian, result.samplesPerS,
              (long long)result.peakBytes);
  std::printf("final loss: %.6g\nloss scale: %g (%s), skipped steps: %lld\n", result.finalLoss,
              result.lossScale, lossScalingMode(job.amp, job.settings).c_str(),
              (long long)result.skipped);
  if (!result.evals.empty() && result.evals.back().loss)
    std::printf("eval loss: %.6g\n", *result.evals.back().loss);
  if (result.evalAccuracy)
    std::printf("eval accuracy: %.4f\n", *result.evalAccuracy);
  else if (!result.evalNote.empty())
    std::printf("eval accuracy: cannot evaluate: %s\n", result.evalNote.c_str());
  if (!result.evals.empty() && result.evals.back().emaLoss)
    std::printf("ema eval loss: %.6g\n", *result.evals.back().emaLoss);
  if (!result.evals.empty() && result.evals.back().emaAccuracy)
    std::printf("ema eval accuracy: %.4f\n", *result.evals.back().emaAccuracy);
  if (result.best)
    std::printf("best %s: %.6g at step %lld%s\n", options.bestMetric.c_str(), result.best->value,
                (long long)result.best->step,
                options.saveBest.empty() ? "" : (" (" + options.saveBest + ")").c_str());
  for (const auto &[step, rate] : result.lrCuts)
    std::printf("lr cut to %.6g after step %lld: %s stopped improving\n", rate, (long long)step,
                options.bestMetric.c_str());
  if (result.stoppedAt)
    std::printf("stopped early at step %lld: %s did not improve for %lld evaluations\n",
                (long long)result.stoppedAt, options.bestMetric.c_str(),
                (long long)options.earlyStop);
  // A run that never trained, or ends on a non-finite loss, says so and
  // what finds the cause.
  bool allSkipped = result.steps > 0 && result.skippedInRun == result.steps;
  if (!result.numerics && (allSkipped || (result.steps > 0 && !std::isfinite(result.finalLoss)))) {
    std::string what = allSkipped ? "all " + std::to_string(result.steps) +
                                        " steps were skipped for a non-finite gradient"
                                  : "the final loss is not finite";
    std::printf("%s; --check-numerics names the first op that made a non-finite value, and "
                "why\n",
                what.c_str());
  }
  AdviceContext advice{"train", args.tokens(), job.userValues, job.amp.lowDtype(),
                       lossScalingMode(job.amp, job.settings)};
  if (result.numerics)
    std::printf("%s", numericsText(*result.numerics, advice).c_str());
  double ampShare = 0;
  if (options.profile) {
    ampShare = printProfile(result.profile, "step", result.steps);
    std::printf("casts, finite check and scale update: %.2f%% of the step\n", 100 * ampShare);
  }
  if (auto file = args.get("metrics-json")) {
    Json m = rt::trainMetrics(trainPlan, options, result);
    if (options.profile)
      m["amp_overhead_share"] = ampShare;
    if (result.numerics)
      m["numerics"] = numericsJson(*result.numerics, advice);
    onFile(*file, [&] { writeFileAtomically(*file, rt::dumpJson(m, 2) + "\n"); });
  }
  return 0;
}

} // namespace ampc::cli
