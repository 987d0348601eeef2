#ifndef AMPC_PASSES
#define AMPC_PASSES

include "mlir/Pass/PassBase.td"

def GraphAmp : Pass<"graph-amp", "::ampc::graph::GraphOp"> {
  let summary = "Automatic mixed precision: decides each node's dtype and inserts casts";
  let description = [{
    Decides, per node, whether it computes in the low-precision dtype L (f16 or
    bf16) or stays f32, following the white/gray/black lists of the ops'
    AmpOpInterface, the custom lists and the custom black varnames, at level
    O0 (no change), O1 (lists), O2 (all but black in L, params stored in L
    with f32 masters) or O3 (everything but the loss in L). Then inserts one
    cast per (value, dtype) where an operand's dtype differs from what its
    consumer computes in. See docs/amp-policy.md.
  }];
  let options = [
    Option<"level", "level", "std::string", /*default=*/"\"O1\"",
           "O0, O1, O2 or O3">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "the low-precision dtype: f16, bf16, or fp8 (bf16 here; graph-fp8 then puts GEMMs in FP8)">,
    ListOption<"customWhiteList", "custom-white-list", "std::string",
               "ops moved to the white list">,
    ListOption<"customBlackList", "custom-black-list", "std::string",
               "ops moved to the black list">,
    ListOption<"customGrayList", "custom-gray-list", "std::string",
               "ops moved to the gray list">,
    ListOption<"customBlackVarnames", "custom-black-varnames", "std::string",
               "values whose producers and consumers stay f32">,
    Option<"moveCastsUpstream", "move-casts-upstream", "bool", /*default=*/"true",
           "rule 4 (precision-agnostic ops take their cast upstream) and exact "
           "widening in loss slots; false gives Paddle's rule, for comparison">,
  ];
}

def GraphFp8 : Pass<"graph-fp8", "::ampc::graph::GraphOp"> {
  let summary = "FP8 GEMMs: quantizes the operands of the bf16 matmuls with delayed scales";
  let description = [{
    Runs after graph-amp at bf16 (`--dtype fp8`). Every matmul that computes
    in bf16 from bf16 operands, has a 2-D operand (a layer's weight), M, N and
    K multiples of 16 and M·N·K of at least `min-size` becomes an
    `fp8_matmul` of two `fp8_quantize`d operands (E4M3) with a bf16 result.
    Each operand, and the result's gradient, has its own scaling state P
    (`P.scale`, `P.scale_inv`: f32 scalars, starting at 1) named
    `<node>.fp8_a`, `<node>.fp8_b` and `<node>.fp8_grad`; the gradient is
    quantized to E5M2 (`format` hybrid) or E4M3 (`format` e4m3) by the
    backward. `exclude` keeps GEMMs in bf16. An operand cast from f32 for the GEMM alone is quantized from
    the f32 value. See docs/amp-policy.md, "FP8".
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"hybrid\"",
           "hybrid (E4M3 forward, E5M2 gradients) or e4m3 (both E4M3)">,
    Option<"minSize", "min-size", "int64_t", /*default=*/"0",
           "GEMMs whose M·N·K is below this stay bf16">,
    ListOption<"exclude", "exclude", "std::string",
               "GEMMs kept in bf16: their node names, or values they read or write">,
  ];
}

def GraphFp8Scaling : Pass<"graph-fp8-scaling", "::ampc::graph::GraphOp"> {
  let summary = "Delayed scaling: updates every FP8 scale from its amax history each step";
  let description = [{
    Runs after graph-autodiff. For every `fp8_quantize` whose scale is the
    param `P.scale` of a scaling state P, adds `P.amax_history` (f32
    [amax-history], zeros) and an `fp8_scale_update` at the end of the step
    that pushes the quantize's amax and sets `P.scale` and `P.scale_inv`
    (Transformer Engine's DelayedScaling: fp8_max 448 for E4M3, 57344 for
    E5M2). A quantize whose scale is no such state is left alone (a static
    scale).
  }];
  let options = [
    Option<"amaxHistory", "amax-history", "int64_t", /*default=*/"1024",
           "steps of amax kept">,
    Option<"amaxCompute", "amax-compute", "std::string", /*default=*/"\"max\"",
           "max (the history's largest) or most_recent">,
    Option<"margin", "margin", "int64_t", /*default=*/"0",
           "the scale is divided by 2^margin">,
  ];
}

def GraphFoldCasts : Pass<"graph-fold-casts", "::ampc::graph::GraphOp"> {
  let summary = "Folds chains of float casts and removes no-op and dead casts";
  let description = [{
    Applies graph.cast's canonicalization patterns to the casts of a graph
    only: `cast(cast(x))` becomes one cast or none, a cast to its operand's
    own dtype disappears (unless it writes a graph output), and casts left
    without users are erased. Other nodes are never touched, even if unused.
  }];
}

def GraphLora : Pass<"graph-lora", "::ampc::graph::GraphOp"> {
  let summary = "Low-rank adapters on the target linear layers; the rest frozen";
  let description = [{
    A linear layer is a matmul by a 2-D float param read by nothing else,
    as it is or through a [1, 0] transpose (PyTorch's [out, in] Linear
    weight); its name is the weight's less the last component. Each layer
    a `targets` pattern matches (`all`: every one) adds
    `scale(dropout(x) @ <layer>.lora_a @ <layer>.lora_b, alpha / rank)` to
    its output, lora_a uniform(±1/sqrt(in)) and lora_b zeros, as PEFT's
    LoRA; every other param is frozen, but those `also-train` matches. See
    docs/training.md, "LoRA on any
    graph".
  }];
  let options = [
    Option<"rank", "rank", "int64_t", /*default=*/"8", "the adapters' rank">,
    Option<"alpha", "alpha", "double", /*default=*/"8.0", "the adapters' scale is alpha / rank">,
    Option<"dropout", "dropout", "double", /*default=*/"0.0",
           "dropout on the adapters' input in training">,
    ListOption<"targets", "targets", "std::string",
               "the layers to adapt, by pattern (a layer's or its weight's name), or all">,
    ListOption<"alsoTrain", "also-train", "std::string",
               "params trained beside the adapters, by pattern (PEFT's modules_to_save)">,
  ];
}

def GraphFreeze : Pass<"graph-freeze", "::ampc::graph::GraphOp"> {
  let summary = "Freezes params by name: training keeps no gradient or state for them";
  let description = [{
    Runs first in training. A param is frozen (`trainable = false`) when its
    name matches a `freeze` pattern, or when `train-only` patterns are given
    and it matches none of them. A pattern is a glob (`*`, `?`, `[...]`)
    that matches a param's whole name or a module of it: `features` matches
    `features.0.weight`. A pattern that matches no param, and a step left
    with nothing to train, are errors. See docs/training.md, "Freezing".
  }];
  let options = [
    ListOption<"freeze", "freeze", "std::string", "params to freeze, by pattern">,
    ListOption<"trainOnly", "train-only", "std::string",
               "params to train, by pattern: the others are frozen">,
  ];
}

def GraphCrossEntropyOptions : Pass<"graph-cross-entropy-options", "::ampc::graph::GraphOp"> {
  let summary = "Sets label smoothing, the ignored label and class weights on the graph's cross entropies";
  let description = [{
    Sets `label_smoothing`, `ignore_index` and the class weights on every
    `softmax_cross_entropy` of the graph, as PyTorch's `cross_entropy`
    takes them; an option left out keeps what the graph has. The weights
    become a `graph.const` (`<loss>.class_weights`, f32 `[C]`), the loss's
    `weight` operand. A graph without a `softmax_cross_entropy`, or weights
    that are not one per class, is an error. See docs/training.md, "Label
    smoothing, ignored labels and class weights".
  }];
  let options = [
    Option<"labelSmoothing", "label-smoothing", "double", /*default=*/"-1.0",
           "the smoothing in [0, 1]; negative keeps the graph's">,
    ListOption<"ignoreIndex", "ignore-index", "int64_t",
               "the label whose rows count for nothing (one value; none keeps the graph's)">,
    ListOption<"classWeights", "class-weights", "double",
               "one weight per class (none keeps the graph's)">,
  ];
}

def GraphAutodiff : Pass<"graph-autodiff", "::ampc::graph::GraphOp"> {
  let summary = "Derives the backward of a forward graph from each op's gradient rule";
  let description = [{
    Reverse-mode differentiation of the graph's loss with respect to every
    trainable param, seeded with 1 (the loss-scaling pass turns the seed into
    the loss scale). Each param's gradient is named `<param>.grad`.
    With `recompute` (the default), activations and layer norms whose
    operands the backward reads anyway are recomputed there instead of kept
    from the forward (docs/training.md). With `gradient-checkpointing`, the
    forward is cut into segments where at most one activation crosses, and
    the backward recomputes each segment's activations from what the cuts
    keep (docs/training.md, "Gradient checkpointing").
  }];
  let options = [
    Option<"recompute", "recompute", "bool", /*default=*/"true",
           "recompute cheap forward values in the backward">,
    Option<"gradientCheckpointing", "gradient-checkpointing", "bool", /*default=*/"false",
           "recompute the forward segment by segment in the backward">,
  ];
}

def GraphLossScaling : Pass<"graph-loss-scaling", "::ampc::graph::GraphOp"> {
  let summary = "Loss scaling, the fused finite check, and gradient accumulation";
  let description = [{
    Seeds the backward with the loss scale S (state `loss_scale`, with the
    counters `loss_scale.good` and `loss_scale.bad`), brings every gradient to
    f32, accumulates them over `accumulate` micro-batches when that is above 1,
    unscales them and checks them for inf/nan in one
    `check_finite_and_unscale` (`found_inf` becomes a graph output), and
    updates S by Paddle's rule. Mode `static` keeps S fixed; `none` uses S = 1;
    both still skip non-finite steps.
  }];
  let options = [
    Option<"mode", "mode", "std::string", /*default=*/"\"dynamic\"", "dynamic, static or none">,
    Option<"initLossScaling", "init-loss-scaling", "double", /*default=*/"65536.0", "initial S">,
    Option<"incrEveryNSteps", "incr-every-n-steps", "int64_t", /*default=*/"2000",
           "finite steps before S grows">,
    Option<"decrEveryNNanOrInf", "decr-every-n-nan-or-inf", "int64_t", /*default=*/"1",
           "non-finite steps before S shrinks">,
    Option<"incrRatio", "incr-ratio", "double", /*default=*/"2.0", "growth factor">,
    Option<"decrRatio", "decr-ratio", "double", /*default=*/"0.5", "backoff factor">,
    Option<"accumulate", "accumulate", "int64_t", /*default=*/"1",
           "micro-batches per optimizer step">,
  ];
}

def GraphDataParallel : Pass<"graph-data-parallel", "::ampc::graph::GraphOp"> {
  let summary = "Sums gradients over data-parallel ranks in fused buckets, before the finite check";
  let description = [{
    Runs after graph-loss-scaling. Each gradient the finite check reads is
    summed over the ranks in the dtype the backward produced it in (f16 or
    bf16 at O1, before the cast to f32; f32 where the backward makes f32).
    Gradients are grouped into buckets by dtype in the order the backward
    produces them, a bucket closing when it holds `bucket-mib` MiB; each
    bucket is one `graph.all_reduce`, placed right after its last gradient.
    The finite check reads the sums, so every rank sees the same values and
    skips the same steps. With `average`, the 1/N is folded into the f32
    unscale (the check divides by S·N): no f16 value is pre-divided. With
    accumulation the f32 accumulators are summed, once per window. FP8
    amaxes (--dtype fp8) are reduced by their max, so that every rank keeps
    the same scales. A world size of 1 changes nothing.
  }];
  let options = [
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1", "ranks">,
    Option<"bucketMib", "bucket-mib", "double", /*default=*/"25.0",
           "a bucket closes when it holds this many MiB">,
    Option<"average", "average", "bool", /*default=*/"true",
           "divide the sums by the world size (in the unscale)">,
  ];
}

def GraphOptimizer : Pass<"graph-optimizer", "::ampc::graph::GraphOp"> {
  let summary = "Adds the optimizer updates of every trainable param";
  let description = [{
    Adds an `lr` input and, per trainable param, its optimizer state and an
    update conditional on `found_inf`. Params stored in low precision (AMP O2)
    get an f32 master copy `<param>.master`: the optimizer updates the master
    and `assign` rewrites the low-precision copy from it. With a schedule
    the updates read `lr_schedule`'s rate for the step instead of `lr` (the
    peak), from a state `lr_schedule.step` that every optimizer step
    advances and an `lr_total_steps` input. With clip-grad-norm X, a
    `grad_norm` of the unscaled gradients and a `clip_scale` give every
    update the grad_scale that applies min(1, X / (norm + 1e-6)).
  }];
  let options = [
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum, adam, adamw, lamb, lion, rmsprop or adagrad">,
    Option<"momentum", "momentum", "double", /*default=*/"-1.0",
           "momentum factor (default: 0.9 for momentum, 0 for rmsprop)">,
    Option<"nesterov", "nesterov", "bool", /*default=*/"false", "Nesterov momentum">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam's, LAMB's and Lion's beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"-1.0",
           "Adam's, LAMB's and Lion's beta2 (default: 0.99 for lion, 0.999 otherwise)">,
    Option<"epsilon", "epsilon", "double", /*default=*/"-1.0",
           "Adam's, LAMB's, RMSprop's and Adagrad's epsilon (default: 1e-6 for lamb, 1e-10 "
           "for adagrad, 1e-8 otherwise)">,
    Option<"alpha", "alpha", "double", /*default=*/"0.99",
           "RMSprop's smoothing of the squared gradients">,
    Option<"centered", "centered", "bool", /*default=*/"false",
           "RMSprop divides by the gradient's estimated variance">,
    Option<"initialAccumulator", "initial-accumulator", "double", /*default=*/"0.0",
           "Adagrad's initial sum of squares">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
           "weight decay: L2 but for adamw's, lamb's and lion's decoupled (default: 0.01 for "
           "adamw and lamb, 0 otherwise)">,
    Option<"noDecay1d", "no-decay-1d", "bool", /*default=*/"false",
           "params of rank 1 or less (biases, norm scales) are not decayed (nor, under "
           "lamb, adapted)">,
    Option<"lrSchedule", "lr-schedule", "std::string", /*default=*/"\"constant\"",
           "constant, cosine, linear, onecycle, step, polynomial, cosine_with_restarts, "
           "inverse_sqrt or warmup_stable_decay">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "all but onecycle and step: steps of linear warmup">,
    Option<"minLr", "min-lr", "double", /*default=*/"0.0",
           "cosine, linear, polynomial, cosine_with_restarts, warmup_stable_decay: the rate "
           "at the last step">,
    Option<"lrStepEvery", "lr-step-every", "int64_t", /*default=*/"1",
           "step: steps between decays">,
    Option<"lrGamma", "lr-gamma", "double", /*default=*/"0.1", "step: the decay factor">,
    Option<"lrPower", "lr-power", "double", /*default=*/"1.0", "polynomial: the power">,
    Option<"lrCycles", "lr-cycles", "int64_t", /*default=*/"1",
           "cosine_with_restarts: the cosine decays">,
    Option<"lrDecaySteps", "lr-decay-steps", "int64_t", /*default=*/"0",
           "warmup_stable_decay: the last steps, that decay">,
    ListOption<"lrScales", "lr-scales", "std::string",
               "PATTERN=FACTOR: the params a pattern matches (the first that does) "
               "update at FACTOR times the step's rate">,
    Option<"clipGradNorm", "clip-grad-norm", "double", /*default=*/"0.0",
           "clips the unscaled gradients to this global L2 norm (0: off)">,
  ];
}

def GraphEma : Pass<"graph-ema", "::ampc::graph::GraphOp"> {
  let summary = "Keeps an exponential moving average of every trained weight";
  let description = [{
    Runs after graph-optimizer. Per trained param P, a state `<P>.ema` (f32,
    P's shape) that starts as P's initial values, and after the updates an
    `ema` of what the optimizer updated (P, or its f32 master at O2) into it,
    skipped with the step when found_inf is set. With `warmup` one counter
    `ema.step` of applied steps gives every `ema` TensorFlow's warmup, d =
    min(decay, (1 + n) / (10 + n)). Frozen params are not averaged: the
    averaged model takes them as they are (docs/training.md, "Weight
    averaging (EMA)").
  }];
  let options = [
    Option<"decay", "decay", "double", /*default=*/"0.999", "the average's decay, in (0, 1)">,
    Option<"warmup", "warmup", "bool", /*default=*/"false",
           "the decay is min(decay, (1 + n) / (10 + n)) after n applied steps">,
  ];
}

def GraphFoldUnscale : Pass<"graph-fold-unscale", "::ampc::graph::GraphOp"> {
  let summary = "Lets the optimizer updates unscale their gradients themselves";
  let description = [{
    Where every unscaled gradient of a `check_finite_and_unscale` is read only
    by optimizer updates, the updates take the scaled gradient and the scale
    (`grad_scale`) and the op becomes a `check_finite` that writes nothing but
    `found_inf`. Bit for bit the same training; no f32 copy of the gradients.
  }];
}

def GraphFuseWeightCasts : Pass<"graph-fuse-weight-casts", "::ampc::graph::GraphOp"> {
  let summary = "Keeps the f16/bf16 copy of each f32 weight up to date in its optimizer update";
  let description = [{
    At O1 the forward and the backward cast every f32 weight to f16/bf16
    on every step. For an f32 param written by nothing but its optimizer
    update (or by nothing: a forward graph, a frozen weight), the casts
    become reads of one persistent copy (a param with `copy_of`,
    `<param>.f16`), and an `assign` after the update, if any, refreshes it; the lowering folds that `assign` into the update, which writes the
    copy in the same pass as the f32 param. The step has no weight casts
    left and computes the same bits. Run for targets that do not fuse casts
    into their readers (the CUDA target).
  }];
}

#endif
