#include "compiler/Pipelines.h"

#include "compiler/Diagnostics.h"
#include "compiler/Lowering.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace ampc {

/// The AMP rewrite both pipelines start with: graph-amp, then cast folding.
static void addAmpPasses(OpPassManager &graphPm, const AmpSettings &settings) {
  GraphAmpOptions options;
  options.level = settings.level;
  options.dtype = settings.lowDtype();
  options.customWhiteList = settings.customWhiteList;
  options.customBlackList = settings.customBlackList;
  options.customGrayList = settings.customGrayList;
  options.customBlackVarnames = settings.customBlackVarnames;
  options.moveCastsUpstream = settings.moveCastsUpstream;
  graphPm.addPass(createGraphAmp(options));
  if (settings.usesFp8()) {
    GraphFp8Options fp8;
    fp8.format = settings.fp8.format;
    fp8.minSize = settings.fp8.minSize;
    fp8.exclude = settings.fp8.exclude;
    graphPm.addPass(createGraphFp8(fp8));
  }
  graphPm.addPass(createGraphFoldCasts());
}

/// The pass whose result is "the IR after AMP": graph-fp8 at fp8.
static StringRef lastAmpPass(const AmpSettings &settings) {
  return settings.usesFp8() ? "graph-fp8" : "graph-amp";
}

/// How IR dumps print: large constants elided unless asked for in full (an
/// imported resnet18's weights are 93 MB of hex).
static OpPrintingFlags dumpFlags(bool fullConstants) {
  OpPrintingFlags flags;
  if (!fullConstants)
    flags.elideLargeElementsAttrs(kElidedConstant);
  return flags;
}

void runAmpPipeline(ModuleOp module, const AmpSettings &settings, IrPrinting printing) {
  MLIRContext *ctx = module.getContext();
  PassManager pm(ctx);
  OpPassManager &graphPm = pm.nest<graph::GraphOp>();
  addAmpPasses(graphPm, settings);
  if (printing.beforeAmp || printing.afterAmp) {
    ctx->disableMultithreading();
    auto isAmp = [](Pass *pass) { return pass->getArgument() == "graph-amp"; };
    StringRef last = lastAmpPass(settings);
    pm.enableIRPrinting(
        [&](Pass *pass, Operation *) { return printing.beforeAmp && isAmp(pass); },
        [&, last](Pass *pass, Operation *) {
          return printing.afterAmp && pass->getArgument() == last;
        },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
        /*printAfterOnlyOnFailure=*/false, llvm::errs(), dumpFlags(printing.fullConstants));
  }
  ErrorCollector errors(ctx);
  if (failed(pm.run(module)))
    errors.raise("the AMP pipeline failed");
}

std::string lossScalingMode(const AmpSettings &amp, const TrainSettings &settings) {
  if (!settings.lossScaling.empty())
    return settings.lossScaling;
  return amp.dtype == "f16" && amp.level != "O0" ? "dynamic" : "none";
}

/// graph-cross-entropy-options with the options given; nothing when none is.
static void addCrossEntropyOptions(OpPassManager &pm, std::optional<double> labelSmoothing,
                                   const CrossEntropyWeighting &weighting) {
  if (!labelSmoothing && weighting.empty())
    return;
  if (weighting.balanced && weighting.classWeights.empty())
    throw GraphError("--class-weights balanced counts the training set's labels: ampc train "
                     "computes the weights (and prints them, to give this command)");
  GraphCrossEntropyOptionsOptions options;
  options.labelSmoothing = labelSmoothing.value_or(-1.0); // negative: the graph's
  std::vector<int64_t> ignore;
  if (weighting.ignoreIndex)
    ignore.push_back(*weighting.ignoreIndex);
  options.ignoreIndex = ignore; // ArrayRefs: the pass copies them when made
  options.classWeights = weighting.classWeights;
  pm.addPass(createGraphCrossEntropyOptions(options));
}

void applyCrossEntropyWeighting(ModuleOp module, const CrossEntropyWeighting &weighting) {
  PassManager pm(module.getContext());
  addCrossEntropyOptions(pm.nest<graph::GraphOp>(), std::nullopt, weighting);
  ErrorCollector errors(module.getContext());
  if (failed(pm.run(module)))
    errors.raise("the cross-entropy options failed");
}

/// The training passes in order, with IR dumps as `settings` ask.
static void runTrainingPasses(ModuleOp module, const AmpSettings &amp,
                              const TrainSettings &settings) {
  MLIRContext *ctx = module.getContext();
  PassManager pm(ctx);
  OpPassManager &graphPm = pm.nest<graph::GraphOp>();
  if (!settings.freeze.empty() || !settings.trainOnly.empty()) {
    GraphFreezeOptions freeze;
    freeze.freeze = settings.freeze;
    freeze.trainOnly = settings.trainOnly;
    graphPm.addPass(createGraphFreeze(freeze));
  }
  addCrossEntropyOptions(graphPm, settings.labelSmoothing, settings.weighting);
  addAmpPasses(graphPm, amp);
  GraphAutodiffOptions autodiff;
  autodiff.recompute = settings.recompute;
  autodiff.gradientCheckpointing = settings.gradientCheckpointing;
  graphPm.addPass(createGraphAutodiff(autodiff));
  if (amp.usesFp8()) {
    GraphFp8ScalingOptions fp8;
    fp8.amaxHistory = amp.fp8.amaxHistory;
    fp8.amaxCompute = amp.fp8.amaxCompute;
    fp8.margin = amp.fp8.margin;
    graphPm.addPass(createGraphFp8Scaling(fp8));
  }
  GraphLossScalingOptions scaling;
  scaling.mode = lossScalingMode(amp, settings);
  scaling.initLossScaling = settings.initLossScaling;
  scaling.incrEveryNSteps = settings.incrEveryNSteps;
  scaling.decrEveryNNanOrInf = settings.decrEveryNNanOrInf;
  scaling.incrRatio = settings.incrRatio;
  scaling.decrRatio = settings.decrRatio;
  scaling.accumulate = settings.accumulate;
  graphPm.addPass(createGraphLossScaling(scaling));
  GraphDataParallelOptions parallel;
  parallel.worldSize = settings.worldSize;
  parallel.bucketMib = settings.bucketMib;
  parallel.average = settings.average;
  graphPm.addPass(createGraphDataParallel(parallel));
  GraphOptimizerOptions optimizer;
  optimizer.optimizer = settings.optimizer;
  optimizer.weightDecay = settings.weightDecay;
  optimizer.momentum = settings.momentum;
  optimizer.nesterov = settings.nesterov;
  optimizer.beta1 = settings.beta1;
  optimizer.beta2 = settings.beta2;
  optimizer.epsilon = settings.epsilon;
  optimizer.alpha = settings.rmspropAlpha;
  optimizer.centered = settings.rmspropCentered;
  optimizer.initialAccumulator = settings.adagradInit;
  optimizer.noDecay1d = settings.noDecay1d;
  optimizer.lrSchedule = settings.lrSchedule;
  optimizer.warmupSteps = settings.warmupSteps;
  optimizer.minLr = settings.minLr;
  optimizer.lrStepEvery = settings.lrStepEvery;
  optimizer.lrGamma = settings.lrGamma;
  optimizer.lrPower = settings.lrPower;
  optimizer.lrCycles = settings.lrCycles;
  optimizer.lrDecaySteps = settings.lrDecaySteps;
  optimizer.clipGradNorm = settings.clipGradNorm;
  optimizer.lrScales = settings.lrScales;
  graphPm.addPass(createGraphOptimizer(optimizer));
  if (settings.emaDecay > 0) {
    GraphEmaOptions ema;
    ema.decay = settings.emaDecay;
    ema.warmup = settings.emaWarmup;
    graphPm.addPass(createGraphEma(ema));
  }
  if (settings.foldUnscale)
    graphPm.addPass(createGraphFoldUnscale());
  graphPm.addPass(createGraphFoldCasts());
  if (!settings.printIrAfter.empty()) {
    ctx->disableMultithreading();
    std::vector<std::string> passes;
    for (const std::string &stage : settings.printIrAfter)
      passes.push_back(stage == "amp" ? lastAmpPass(amp).str() : "graph-" + stage);
    pm.enableIRPrinting([](Pass *, Operation *) { return false; },
                        [passes](Pass *pass, Operation *) {
                          return llvm::is_contained(passes, pass->getArgument().str());
                        },
                        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
                        /*printAfterOnlyOnFailure=*/false, llvm::errs(),
                        dumpFlags(settings.printIrFullConstants));
  }
  ErrorCollector errors(ctx);
  if (failed(pm.run(module)))
    errors.raise("the training pipeline failed");
}

/// The training step of a copy of `module` (no IR dumps), with or without
/// gradient checkpointing.
static OwningOpRef<ModuleOp> trainingStepOf(ModuleOp module, const AmpSettings &amp,
                                            TrainSettings settings, bool checkpointing) {
  settings.gradientCheckpointing = checkpointing;
  settings.printIrAfter.clear();
  OwningOpRef<ModuleOp> copy = module.clone();
  runTrainingPasses(*copy, amp, settings);
  return copy;
}

void runTrainingPipeline(ModuleOp module, const AmpSettings &amp, const TrainSettings &settings) {
  if (!settings.gradientCheckpointing)
    return runTrainingPasses(module, amp, settings);
  // Recomputing cannot help where one segment holds nearly everything (an
  // unrolled LSTM) or the peak lies elsewhere; the CPU plan of each way
  // decides (docs/training.md, "Gradient checkpointing").
  OwningOpRef<ModuleOp> kept = trainingStepOf(module, amp, settings, false);
  OwningOpRef<ModuleOp> recomputed = trainingStepOf(module, amp, settings, true);
  int64_t keptPeak = lowerToPlan(*kept).peakBytes();
  int64_t recomputedPeak = lowerToPlan(*recomputed).peakBytes();
  bool recompute = recomputedPeak < keptPeak;
  if (!recompute) {
    ErrorCollector warnings(module.getContext());
    emitWarning(module.getLoc())
        << "gradient checkpointing does not lower this step's planned peak (" << recomputedPeak
        << " bytes with it, " << keptPeak << " without): the backward keeps the forward's "
        << "activations";
  }
  if (!settings.printIrAfter.empty()) { // the chosen step again, printed as it runs
    TrainSettings chosen = settings;
    chosen.gradientCheckpointing = recompute;
    return runTrainingPasses(module, amp, chosen);
  }
  module.getBodyRegion().takeBody((recompute ? recomputed : kept)->getBodyRegion());
}

void runLoraPipeline(ModuleOp module, const LoraSettings &settings) {
  GraphLoraOptions options;
  options.rank = settings.rank;
  options.alpha = settings.alpha;
  options.dropout = settings.dropout;
  options.targets = settings.targets;
  options.alsoTrain = settings.alsoTrain;
  PassManager pm(module.getContext());
  pm.nest<graph::GraphOp>().addPass(createGraphLora(options));
  ErrorCollector errors(module.getContext());
  if (failed(pm.run(module)))
    errors.raise("the LoRA pass failed");
}

bool hasTargetPasses(const rt::Target &target) {
  return !target.fusedCasts; // else its kernels round f32 weights as they read them
}

void runTargetPasses(ModuleOp module, const rt::Target &target) {
  if (!hasTargetPasses(target))
    return;
  PassManager pm(module.getContext());
  pm.nest<graph::GraphOp>().addPass(createGraphFuseWeightCasts());
  ErrorCollector errors(module.getContext());
  if (failed(pm.run(module)))
    errors.raise("the target's passes failed");
}

} // namespace ampc
