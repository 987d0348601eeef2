// Pass pipelines over a loaded graph.
#ifndef AMPC_COMPILER_PIPELINES_H
#define AMPC_COMPILER_PIPELINES_H

#include <optional>

#include "mlir/IR/BuiltinOps.h"
#include "passes/Passes.h"
#include "runtime/core/Target.h"

namespace ampc {

/// FP8's options (docs/amp-policy.md, "FP8"): graph-fp8's and graph-fp8-scaling's.
struct Fp8Settings {
  std::string format = "hybrid", amaxCompute = "max";
  int64_t amaxHistory = 1024, margin = 0, minSize = 0;
  /// GEMMs kept in bf16 (node names, or values they read or write).
  std::vector<std::string> exclude;
};

/// The AMP options (docs/amp-policy.md, "Options"), owning their lists.
/// `dtype` fp8 is bf16 with the qualifying GEMMs in FP8.
struct AmpSettings {
  std::string level = "O1", dtype = "f16";
  Fp8Settings fp8;
  /// The dtype the AMP pass computes in: bf16 at fp8.
  std::string lowDtype() const { return dtype == "fp8" ? "bf16" : dtype; }
  bool usesFp8() const { return dtype == "fp8" && level != "O0"; }
  std::vector<std::string> customWhiteList, customBlackList, customGrayList,
      customBlackVarnames;
  /// Rule 4; off gives Paddle's rule (for comparisons).
  bool moveCastsUpstream = true;
};

/// IR dumps to stderr. Constants of more than kElidedConstant elements print
/// elided (`dense_resource<__elided__>`) unless `fullConstants`.
struct IrPrinting {
  bool beforeAmp = false, afterAmp = false, fullConstants = false;
};
constexpr int64_t kElidedConstant = 16;

/// Which rows of a cross entropy count and how much each class weighs
/// (PyTorch's `ignore_index=` and `weight=`): training's loss and the
/// validation loss both; unset or empty keeps the graph's.
struct CrossEntropyWeighting {
  std::optional<int64_t> ignoreIndex;
  std::vector<double> classWeights;
  /// `--class-weights balanced`: the weights come from the training set's
  /// labels, which the driver counts into classWeights before a pipeline
  /// runs (a pipeline given none is an error saying so).
  bool balanced = false;
  bool empty() const { return !ignoreIndex && classWeights.empty() && !balanced; }
};

/// The training options (docs/training.md).
struct TrainSettings {
  /// dynamic, static or none; empty: dynamic for f16 at O1-O3, none otherwise
  /// (bf16 and f32 keep f32's range).
  std::string lossScaling;
  double initLossScaling = 65536.0, incrRatio = 2.0, decrRatio = 0.5;
  int64_t incrEveryNSteps = 2000, decrEveryNNanOrInf = 1, accumulate = 1;
  std::string optimizer = "sgd";
  double weightDecay = -1.0; // default per optimizer
  /// The optimizers' settings (docs/training.md, "Optimizers").
  double momentum = -1.0; // default per optimizer: 0.9, rmsprop's 0
  double beta1 = 0.9;
  double beta2 = -1.0;   // default per optimizer: 0.999, lion's 0.99
  double epsilon = -1.0; // default per optimizer: 1e-8, lamb's 1e-6, adagrad's 1e-10
  double rmspropAlpha = 0.99, adagradInit = 0.0;
  bool rmspropCentered = false;
  bool nesterov = false, noDecay1d = false;
  /// The learning-rate schedule (docs/training.md, "Learning-rate schedules").
  std::string lrSchedule = "constant";
  int64_t warmupSteps = 0, lrStepEvery = 1, lrCycles = 1, lrDecaySteps = 0;
  double minLr = 0.0, lrGamma = 0.1, lrPower = 1.0;
  /// Gradient clipping by global norm (docs/training.md); 0: off.
  double clipGradNorm = 0.0;
  /// graph-ema: a moving average of the trained weights with this decay
  /// (docs/training.md, "Weight averaging (EMA)"); 0: none. With
  /// `emaWarmup`, TensorFlow's warmup of the decay.
  double emaDecay = 0.0;
  bool emaWarmup = false;
  /// PATTERN=FACTOR: params' rates as multiples of the step's (docs/training.md).
  std::vector<std::string> lrScales;
  /// graph-fold-unscale; off keeps the unscaled f32 gradients (for comparisons).
  bool foldUnscale = true;
  /// graph-autodiff's recompute: cheap forward values the backward needs are
  /// recomputed there (less memory); off keeps them (`--no-fuse recompute`).
  bool recompute = true;
  /// graph-autodiff's gradient checkpointing: the backward recomputes the
  /// forward's activations segment by segment (less memory, one more forward).
  bool gradientCheckpointing = false;
  /// graph-cross-entropy-options: PyTorch's cross_entropy(label_smoothing=)
  /// and the rows and classes the loss weighs; unset keeps the graph's.
  std::optional<double> labelSmoothing;
  CrossEntropyWeighting weighting;
  /// graph-freeze: params frozen by name, and (when given) the only ones
  /// trained; globs that match a name or a module of it.
  std::vector<std::string> freeze, trainOnly;
  /// Data-parallel training (graph-data-parallel): ranks, the bucket size,
  /// and whether the sum over ranks is averaged. One rank adds nothing.
  int64_t worldSize = 1;
  double bucketMib = 25.0;
  bool average = true;
  /// Stages whose IR prints to stderr: amp, autodiff, loss-scaling,
  /// data-parallel, optimizer; large constants elided unless
  /// `printIrFullConstants` (IrPrinting).
  std::vector<std::string> printIrAfter;
  bool printIrFullConstants = false;
};

/// LoRA adapters on a graph's linear layers (graph-lora; docs/training.md,
/// "LoRA on any graph").
struct LoraSettings {
  int64_t rank = 8;
  double alpha = 8.0, dropout = 0.0;
  /// Patterns over the layers' names, or `all`.
  std::vector<std::string> targets;
  /// Params trained beside the adapters (PEFT's modules_to_save).
  std::vector<std::string> alsoTrain;
};

/// Adds the adapters `settings` ask for and freezes the rest (but
/// `alsoTrain`). Throws
/// GraphError.
void runLoraPipeline(mlir::ModuleOp module, const LoraSettings &settings);

/// The loss-scaling mode `settings` resolve to for these AMP settings.
std::string lossScalingMode(const AmpSettings &amp, const TrainSettings &settings);

/// `weighting` (what is given of it) on the graph's cross entropies: for a
/// forward graph that validation or `ampc run` scores (label smoothing is
/// training's alone: the validation loss is the unsmoothed cross entropy).
/// Throws GraphError.
void applyCrossEntropyWeighting(mlir::ModuleOp module, const CrossEntropyWeighting &weighting);

/// AMP, then autodiff, loss scaling, data parallel, optimizer, unscale
/// folding and cast cleanup: the module becomes one training step. With
/// gradient checkpointing asked, the step recomputes only where its planned
/// peak is lower that way (a warning says where it is not). Throws
/// GraphError.
void runTrainingPipeline(mlir::ModuleOp module, const AmpSettings &amp,
                         const TrainSettings &settings);

/// Runs the AMP pass and the cast cleanup (graph-amp, graph-fold-casts) on
/// every graph of the module. Warnings print as `ampc: warning: ...`; errors
/// throw GraphError. IR dumps go to stderr through MLIR's IR printing.
void runAmpPipeline(mlir::ModuleOp module, const AmpSettings &settings,
                    IrPrinting printing = {});

/// The passes a target asks for before lowering: for targets that do not
/// fuse casts into their readers, graph-fuse-weight-casts. Throws GraphError.
void runTargetPasses(mlir::ModuleOp module, const rt::Target &target);
bool hasTargetPasses(const rt::Target &target);

} // namespace ampc

#endif
