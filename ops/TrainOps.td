#ifndef AMPC_TRAIN_OPS
#define AMPC_TRAIN_OPS

//===----------------------------------------------------------------------===//
// Loss scaling and optimizers. The updates write the persistent buffers of
// their state operands in place, after every read of them in the step.
//===----------------------------------------------------------------------===//

def Graph_CheckFiniteAndUnscaleOp : Graph_NodeOp<"check_finite_and_unscale", "None",
    (ins Variadic<Graph_FloatTensor>:$grads, Graph_FloatTensor:$scale),
    (outs Variadic<Graph_FloatTensor>:$unscaled, Graph_Tensor:$found_inf),
    [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0> {
  let summary = "Divides gradients by the loss scale and flags any inf or nan";
  let description = [{
    One fused pass over the whole gradient list: `unscaled[i] = grads[i] /
    scale`, in f32 whatever the gradient's dtype (so an f16 gradient needs no
    separate cast), and `found_inf` (an i1 scalar) is true when any element
    of any gradient is inf or nan.
  }];
}

def Graph_CheckFiniteOp : Graph_NodeOp<"check_finite", "None",
    (ins Variadic<Graph_FloatTensor>:$grads), (outs Graph_Tensor:$found_inf),
    [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0> {
  let summary = "Flags any inf or nan in a gradient list";
  let description = [{
    `found_inf` (an i1 scalar) is true when any element of any gradient is inf
    or nan. What `check_finite_and_unscale` becomes when every unscaled
    gradient feeds an optimizer that divides by the scale itself
    (graph-fold-unscale): the gradients are read once and nothing is written.
  }];
}

def Graph_AllReduceOp : Graph_NodeOp<"all_reduce", "None",
    (ins Variadic<Graph_FloatTensor>:$grads,
         DefaultValuedAttr<I64Attr, "1">:$world_size,
         DefaultValuedAttr<I64Attr, "0">:$bucket,
         DefaultValuedAttr<StrAttr, "\"sum\"">:$reduce),
    (outs Variadic<Graph_FloatTensor>:$reduced),
    [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0, /*pure=*/0> {
  let summary = "Sums a bucket of gradients over the ranks of a data-parallel run";
  let description = [{
    `reduced[i]` is the sum over all `world_size` ranks of `grads[i]`, in
    the gradients' dtype (one dtype per bucket). One collective moves the
    whole bucket: the memory planner lays its tensors out one after another,
    so no packing copy is needed. Added by graph-data-parallel, which folds
    the 1/N of averaging into the f32 unscale (docs/training.md,
    "Data-parallel training"). `bucket` numbers the buckets in the order the
    backward fills them. With `reduce` "max" (f32 only) each result is the
    largest over the ranks instead: the FP8 amaxes, so that every rank
    computes the same scales.
  }];
}

def Graph_UpdateLossScalingOp : Graph_UpdateOp<"update_loss_scaling",
    (ins Graph_Tensor:$found_inf, Graph_FloatTensor:$scale, Graph_FloatTensor:$good,
         Graph_FloatTensor:$bad,
         DefaultValuedAttr<I64Attr, "2000">:$incr_every_n_steps,
         DefaultValuedAttr<I64Attr, "1">:$decr_every_n_nan_or_inf,
         DefaultValuedAttr<F64Attr, "2.0">:$incr_ratio,
         DefaultValuedAttr<F64Attr, "0.5">:$decr_ratio,
         DefaultValuedAttr<BoolAttr, "true">:$dynamic)> {
  let summary = "Paddle's dynamic loss-scaling rule";
  let description = [{
    If `found_inf`: good := 0, bad += 1, and when bad reaches
    `decr_every_n_nan_or_inf`, scale := max(scale * decr_ratio, 1), bad := 0.
    Else: bad := 0, good += 1, and when good reaches `incr_every_n_steps`,
    scale := scale * incr_ratio if that is finite, good := 0. With `dynamic`
    false the scale stays fixed. Writes scale, good and bad in place.
  }];
}

def Graph_SgdOp : Graph_UpdateOp<"sgd",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay)> {
  let summary = "param -= lr * grad, unless found_inf";
  let description = [{
    `lr` is a scalar. Writes `param` in place. With `grad_scale`, `grad` is the scaled
    gradient and the update uses `grad * (1 / grad_scale)` computed in f32, the
    value `check_finite_and_unscale` would have written. `weight_decay` is L2,
    as PyTorch's SGD has it: `grad + weight_decay * param` is the gradient.
  }];
}

def Graph_MomentumOp : Graph_UpdateOp<"momentum",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$velocity,
         Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "0.9">:$momentum,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<BoolAttr, "false">:$nesterov)> {
  let summary = "v = momentum * v + grad; param -= lr * v, unless found_inf";
  let description = [{
    Writes `param` and `velocity` in place. With `grad_scale`, `grad` is the scaled
    gradient and the update uses `grad * (1 / grad_scale)` computed in f32, the
    value `check_finite_and_unscale` would have written. As PyTorch's SGD with
    momentum (no dampening): `weight_decay` is L2 (`grad + weight_decay *
    param`), and with `nesterov` the step is `grad + momentum * v`.
  }];
}

def Graph_AdamOp : Graph_UpdateOp<"adam",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$m, Graph_FloatTensor:$v,
         Graph_FloatTensor:$step, Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.999">:$beta2,
         DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<BoolAttr, "true">:$decoupled)> {
  let summary = "Adam or AdamW, unless found_inf";
  let description = [{
    m, v: first and second moments; `step` is the count of applied updates
    (already incremented for this one) for bias correction. With `decoupled`
    (AdamW) weight decay is param -= lr * weight_decay * param before the
    step; without it (Adam) it is L2, `grad + weight_decay * param`, as
    PyTorch's Adam has it. Writes param, m, v in place. With `grad_scale`,
    `grad` is the scaled gradient and the update uses `grad * (1 /
    grad_scale)` computed in f32, the value `check_finite_and_unscale` would
    have written.
  }];
}

def Graph_LambOp : Graph_UpdateOp<"lamb",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$m, Graph_FloatTensor:$v,
         Graph_FloatTensor:$step, Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.999">:$beta2,
         DefaultValuedAttr<F64Attr, "1.0e-6">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<BoolAttr, "true">:$adapt)> {
  let summary = "LAMB: Adam's step with decoupled decay, scaled per tensor by a trust ratio, unless found_inf";
  let description = [{
    The moments m and v and the bias correction as `adam`'s; the direction
    `u = m_hat / (sqrt(v_hat) + epsilon) + weight_decay * param`; then
    `param -= lr * r * u` with the trust ratio `r = ||param|| / ||u||` over
    the whole tensor (1 where either norm is 0, or without `adapt`), as
    NVIDIA's FusedLAMB and TensorFlow Addons' LAMB compute it. Writes param,
    m and v in place. `grad_scale` as for `adam`.
  }];
}

def Graph_LionOp : Graph_UpdateOp<"lion",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$m,
         Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "0.9">:$beta1,
         DefaultValuedAttr<F64Attr, "0.99">:$beta2,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay)> {
  let summary = "Lion: param -= lr * sign(beta1 * m + (1 - beta1) * grad), unless found_inf";
  let description = [{
    Lion (Chen et al., 2023, "Symbolic Discovery of Optimization
    Algorithms"): one f32 state, m. With decoupled weight decay first,
    `param -= lr * weight_decay * param`; then `param -= lr * sign(beta1 * m
    + (1 - beta1) * grad)` (sign 0 at 0) and `m = beta2 * m + (1 - beta2) *
    grad`. Writes param and m in place. `grad_scale` as for `sgd`.
  }];
}

def Graph_RmspropOp : Graph_UpdateOp<"rmsprop",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$square_avg,
         Variadic<Graph_FloatTensor>:$more,
         DefaultValuedAttr<F64Attr, "0.99">:$alpha,
         DefaultValuedAttr<F64Attr, "1.0e-8">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
         DefaultValuedAttr<F64Attr, "0.0">:$momentum,
         DefaultValuedAttr<BoolAttr, "false">:$centered)> {
  let summary = "RMSprop: param -= lr * grad / (sqrt(square_avg) + epsilon), unless found_inf";
  let description = [{
    As PyTorch's `RMSprop`: `weight_decay` is L2; `square_avg = alpha *
    square_avg + (1 - alpha) * grad^2`. `more` holds the optional operands,
    in this order: the momentum buffer where `momentum` is above 0 (`buf =
    momentum * buf + grad / denominator; param -= lr * buf`), the gradient's
    average where `centered` (`avg = alpha * avg + (1 - alpha) * grad`, the
    denominator `sqrt(square_avg - avg^2) + epsilon`), then `grad_scale` as
    for `sgd`. Writes param and its states in place.
  }];
  let ampExtraDecl = [{
    /// The optional operands in `more`, each null where absent.
    ::mlir::Value getMomentumBuffer();
    ::mlir::Value getGradAverage();
    ::mlir::Value getGradScale();
  }];
}

def Graph_AdagradOp : Graph_UpdateOp<"adagrad",
    (ins Graph_FloatTensor:$param, Graph_FloatTensor:$grad, Graph_FloatTensor:$lr,
         Graph_Tensor:$found_inf, Graph_FloatTensor:$sum,
         Optional<Graph_FloatTensor>:$grad_scale,
         DefaultValuedAttr<F64Attr, "1.0e-10">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.0">:$weight_decay)> {
  let summary = "Adagrad: sum += grad^2; param -= lr * grad / (sqrt(sum) + epsilon), unless found_inf";
  let description = [{
    As PyTorch's `Adagrad` without `lr_decay` (a schedule decays the rate):
    `weight_decay` is L2. `sum` starts at the initial accumulator value.
    Writes param and sum in place. `grad_scale` as for `sgd`.
  }];
}

def Graph_CountStepOp : Graph_UpdateOp<"count_step",
    (ins Graph_FloatTensor:$step, Optional<Graph_Tensor>:$found_inf)> {
  let summary = "step += 1, unless found_inf";
  let description = [{
    The count of applied optimizer steps; without `found_inf`, of every
    optimizer step (a learning-rate schedule's, which skipped steps advance).
  }];
}

def Graph_EmaOp : Graph_UpdateOp<"ema",
    (ins Graph_FloatTensor:$average, Graph_FloatTensor:$value, Graph_Tensor:$found_inf,
         Optional<Graph_FloatTensor>:$step, F64Attr:$decay)> {
  let summary = "average := lerp(average, value, 1 - d), unless found_inf";
  let description = [{
    An exponential moving average of a trained weight (docs/training.md,
    "Weight averaging (EMA)"): with w = 1 - d in f32, `average` (f32, the
    value's shape) becomes `average + w * (value - average)` where w < 0.5,
    else `value - (value - average) * (1 - w)`, each element in f32 as
    PyTorch's `lerp_` computes it. d is `decay`, or with `step` (an f32
    scalar: the applied optimizer steps, this one included) min(decay,
    (1 + step) / (10 + step)), the warmup of TensorFlow's and Paddle's
    ExponentialMovingAverage. Writes `average` in place; a skipped step
    changes nothing.
  }];
}

def Graph_GradNormOp : Graph_NodeOp<"grad_norm", "None",
    (ins Graph_FloatTensor:$scale, Variadic<Graph_FloatTensor>:$grads),
    (outs Graph_FloatTensor:$norm), [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0> {
  let summary = "The global L2 norm of the gradients divided by the loss scale";
  let description = [{
    Each element is `grad * (1 / scale)` in f32, as the unscale computes it;
    their squares are summed in f64 over every gradient, and the result is
    the f32 square root: what `clip_grad_norm_` returns after
    `scaler.unscale_`. `scale` is the f32 loss scale (the constant 1 where
    the gradients are unscaled). The plan computes it in the finite check's
    pass over the gradients (docs/training.md, "Gradient clipping").
  }];
}

def Graph_ClipScaleOp : Graph_NodeOp<"clip_scale", "None",
    (ins Graph_FloatTensor:$norm, Graph_FloatTensor:$scale, F64Attr:$max_norm),
    (outs Graph_FloatTensor:$grad_scale), [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0> {
  let summary = "The loss scale the updates divide by, with clipping folded in";
  let description = [{
    `scale / min(1, max_norm / (norm + 1e-6))`, in f32: an update that
    multiplies its gradient by `1 / grad_scale` then applies PyTorch's
    `clip_grad_norm_(params, max_norm)` factor to the unscaled gradient.
  }];
}

def Graph_LrScheduleOp : Graph_NodeOp<"lr_schedule", "None",
    (ins Graph_FloatTensor:$peak, Graph_FloatTensor:$step, Graph_FloatTensor:$total_steps,
         StrAttr:$kind,
         DefaultValuedAttr<I64Attr, "0">:$warmup_steps,
         DefaultValuedAttr<F64Attr, "0.0">:$min_lr,
         DefaultValuedAttr<I64Attr, "1">:$step_every,
         DefaultValuedAttr<F64Attr, "0.1">:$gamma,
         DefaultValuedAttr<F64Attr, "1.0">:$power,
         DefaultValuedAttr<I64Attr, "1">:$cycles,
         DefaultValuedAttr<I64Attr, "0">:$decay_steps),
    (outs Graph_FloatTensor:$lr), [], /*agnostic=*/0, /*infer=*/1, /*forward=*/0> {
  let summary = "The learning rate of optimizer step `step` under a schedule";
  let description = [{
    `peak` (the run's --lr), `step` (the optimizer steps taken so far, from
    0) and `total_steps` (the run's, S) are f32 scalars; the result is the
    f32 learning rate (docs/training.md, "Learning-rate schedules").
    `kind`: `constant` (after a linear warmup over `warmup_steps`, if
    any), `cosine` (the same warmup, then cosine decay to `min_lr` at S),
    `linear` (the warmup, then a straight line to `min_lr` at S),
    `polynomial` (the warmup, then (1 - progress)^`power` from the peak to
    `min_lr`), `cosine_with_restarts` (the warmup, then `cycles` cosine
    decays to `min_lr`, each from the peak), `inverse_sqrt` (the warmup W,
    then the peak times sqrt(T / (s - W + T)), T = W, or 10^4 without one),
    `warmup_stable_decay` (the warmup, the peak, then a cosine decay to
    `min_lr` over the last `decay_steps`), `onecycle` (PyTorch's
    OneCycleLR with its defaults) or `step` (PyTorch's StepLR: times
    `gamma` every `step_every` steps).
  }];
}

def Graph_Fp8ScaleUpdateOp : Graph_UpdateOp<"fp8_scale_update",
    (ins Graph_FloatTensor:$amax_history, Graph_FloatTensor:$scale,
         Graph_FloatTensor:$scale_inv, Graph_FloatTensor:$amax,
         DefaultValuedAttr<F64Attr, "448.0">:$fp8_max,
         DefaultValuedAttr<I64Attr, "0">:$margin,
         DefaultValuedAttr<StrAttr, "\"max\"">:$amax_compute)> {
  let summary = "Delayed scaling of an FP8 operand (Transformer Engine's recipe)";
  let description = [{
    `amax_history` ([N], f32, newest first) takes this step's `amax` at its
    front and drops its oldest; then `scale` := (fp8_max / a) / 2^margin in
    f32, a being the history's largest (`amax_compute` "max") or its newest
    ("most_recent"), unless a is 0 or not finite or the result is not
    finite, when the scale stays; `scale_inv` := 1 / scale. All four are f32,
    the last three scalars; the first three are written in place
    (docs/runtime.md, "FP8 scaling"). `fp8_max` is 448 for E4M3 operands and
    57344 for E5M2 ones.
  }];
}

def Graph_AssignOp : Graph_UpdateOp<"assign",
    (ins Graph_Tensor:$target, Graph_Tensor:$value)> {
  let summary = "Writes value (cast to target's dtype) into target's buffer";
  let description = [{
    Refreshes the low-precision copy of a param from its f32 master (AMP O2),
    or resets a gradient accumulator.
  }];
}

def Graph_RestoreIfSkippedOp : Graph_UpdateOp<"restore_if_skipped",
    (ins Graph_Tensor:$target, Graph_Tensor:$backup, Graph_Tensor:$found_inf)> {
  let summary = "target := backup when found_inf";
  let description = [{
    Undoes a change the forward made to state (batch norm's running
    statistics) when the step is skipped: with the `assign` of `backup` at the
    start of the step, a skipped step changes no state.
  }];
}

def Graph_AccumulateOp : Graph_UpdateOp<"accumulate",
    (ins Graph_FloatTensor:$acc, Graph_FloatTensor:$grad)> {
  let summary = "acc += grad (in acc's dtype, f32)";
  let description = [{ Gradient accumulation over micro-batches. }];
}

#endif
