#ifndef AMPC_GRAD_OPS
#define AMPC_GRAD_OPS

//===----------------------------------------------------------------------===//
// Backward ops, made by the autodiff pass. Each computes in the dtype of its
// incoming gradient (the forward node's dtype).
//===----------------------------------------------------------------------===//

def Graph_BroadcastToOp : Graph_GradOp<"broadcast_to",
    (ins Graph_Tensor:$x, DenseI64ArrayAttr:$shape), (outs Graph_Tensor:$y)> {
  let summary = "Broadcasts a tensor to a shape (numpy rules)";
  let description = [{ The backward of reductions: repeats `x` along broadcast dimensions. }];
}

def Graph_ReduceToOp : Graph_GradOp<"reduce_to",
    (ins Graph_FloatTensor:$x, DenseI64ArrayAttr:$shape), (outs Graph_FloatTensor:$y)> {
  let summary = "Sums a tensor down to a shape it was broadcast from";
  let description = [{
    The backward of broadcasting: sums `x` over the dimensions that `shape`
    broadcasts (leading ones, and those of size 1).
  }];
}

def Graph_UnaryBackwardOp : Graph_GradOp<"unary_backward",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$y, Graph_FloatTensor:$dy, StrAttr:$fn,
         DefaultValuedAttr<F64Attr, "1.0">:$exponent),
    (outs Graph_FloatTensor:$dx)> {
  let summary = "dx = dy * f'(x) for an elementwise function";
  let description = [{
    `fn` is one of relu, gelu, gelu_tanh, tanh, sigmoid, erf, abs, exp, log, sqrt,
    rsqrt, square, pow, sin, cos; `x` is the forward input and `y` its output (each rule
    uses the one it needs). `exponent` is pow's.
  }];
}

def Graph_MinMaxBackwardOp : Graph_GradOp<"minmax_backward",
    (ins Graph_FloatTensor:$a, Graph_FloatTensor:$b, Graph_FloatTensor:$dy, StrAttr:$fn),
    (outs Graph_FloatTensor:$da, Graph_FloatTensor:$db)> {
  let summary = "Routes the gradient of maximum or minimum to the winning operand";
  let description = [{
    `fn` is max or min; ties go to `a`. Both results have `dy`'s shape (the
    autodiff reduces them to the operands' shapes).
  }];
}

def Graph_Conv2dBackwardInputOp : Graph_GradOp<"conv2d_backward_input",
    (ins Graph_FloatTensor:$dy, Graph_FloatTensor:$filter,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
         DefaultValuedAttr<I64Attr, "1">:$groups,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout, DenseI64ArrayAttr:$input_shape),
    (outs Graph_FloatTensor:$dx)> {
  let summary = "Gradient of conv2d with respect to its input";
  let description = [{ The transposed convolution of `dy` with `filter`. }];
}

def Graph_Conv2dBackwardFilterOp : Graph_GradOp<"conv2d_backward_filter",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$dy,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
         DefaultValuedAttr<I64Attr, "1">:$groups,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout, DenseI64ArrayAttr:$filter_shape),
    (outs Graph_FloatTensor:$dfilter)> {
  let summary = "Gradient of conv2d with respect to its filter";
  let description = [{ Correlates the input with `dy`, summed over the batch. }];
}

def Graph_MaxPool2dBackwardOp : Graph_GradOp<"max_pool2d_backward",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$dy, DenseI64ArrayAttr:$kernel,
         OptionalAttr<DenseI64ArrayAttr>:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$dx)> {
  let summary = "Gradient of max_pool2d: dy goes to each window's first maximum";
  let description = [{ `x` is the forward input. }];
}

def Graph_AvgPool2dBackwardOp : Graph_GradOp<"avg_pool2d_backward",
    (ins Graph_FloatTensor:$dy, DenseI64ArrayAttr:$kernel,
         OptionalAttr<DenseI64ArrayAttr>:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout, DenseI64ArrayAttr:$input_shape),
    (outs Graph_FloatTensor:$dx)> {
  let summary = "Gradient of avg_pool2d";
  let description = [{ Spreads each window's gradient over its valid cells. }];
}

def Graph_BatchNormBackwardOp : Graph_GradOp<"batch_norm_backward",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$dy, Graph_FloatTensor:$scale,
         DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dscale, Graph_FloatTensor:$dbias)> {
  let summary = "Gradient of training-mode batch_norm";
  let description = [{
    Recomputes the batch statistics of `x`; dscale and dbias have `scale`'s
    dtype (f32 under AMP).
  }];
}

def Graph_LayerNormBackwardOp : Graph_GradOp<"layer_norm_backward",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$dy, Graph_FloatTensor:$scale,
         DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
         DefaultValuedAttr<I64Attr, "-1">:$axis),
    (outs Graph_FloatTensor:$dx, Graph_FloatTensor:$dscale, Graph_FloatTensor:$dbias)> {
  let summary = "Gradient of layer_norm";
  let description = [{ Recomputes each row's mean and variance. }];
}

def Graph_AttentionBackwardOp : Graph_GradOp<"attention_backward",
    (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k, Graph_FloatTensor:$v,
         Graph_FloatTensor:$y, Graph_FloatTensor:$dy,
         Optional<Graph_FloatTensor>:$bias,
         DefaultValuedAttr<BoolAttr, "false">:$causal,
         OptionalAttr<F64Attr>:$scale,
         DefaultValuedAttr<F64Attr, "0.0">:$dropout,
         DefaultValuedAttr<I64Attr, "0">:$seed),
    (outs Graph_FloatTensor:$dq, Graph_FloatTensor:$dk, Graph_FloatTensor:$dv)> {
  let summary = "Gradient of attention";
  let description = [{
    Recomputes each row's scores and log-sum-exp from `q` and `k`
    (FlashAttention-2's backward): nothing seq_q x seq_k is stored. With
    `dropout`, the forward's mask is drawn again from `seed` and the step;
    `bias` is the forward's.
  }];
}

def Graph_SoftmaxBackwardOp : Graph_GradOp<"softmax_backward",
    (ins Graph_FloatTensor:$y, Graph_FloatTensor:$dy,
         DefaultValuedAttr<I64Attr, "-1">:$axis,
         DefaultValuedAttr<BoolAttr, "false">:$log),
    (outs Graph_FloatTensor:$dx)> {
  let summary = "Gradient of softmax (or of log_softmax when `log`)";
  let description = [{ `y` is the forward output. }];
}

def Graph_SoftmaxCrossEntropyBackwardOp : Graph_GradOp<"softmax_cross_entropy_backward",
    (ins Graph_FloatTensor:$logits, Graph_IntTensor:$labels, Graph_FloatTensor:$dloss,
         Optional<Graph_FloatTensor>:$weight,
         DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
         OptionalAttr<I64Attr>:$ignore_index,
         DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction),
    (outs Graph_FloatTensor:$dlogits)> {
  let summary = "Gradient of softmax_cross_entropy: (softmax - target) * dloss / rows";
  let description = [{
    `dloss` is a scalar, or with `reduction` "none" one a row (the labels'
    shape), each scaling its own row. The target, the rows counted and the
    class weights are the forward's (its `label_smoothing`, `ignore_index`,
    `weight` and `reduction`: with "sum" or "none" nothing divides dloss);
    an ignored row's gradient is 0.
  }];
}

def Graph_MseLossBackwardOp : Graph_GradOp<"mse_loss_backward",
    (ins Graph_FloatTensor:$prediction, Graph_FloatTensor:$target, Graph_FloatTensor:$dloss),
    (outs Graph_FloatTensor:$dprediction)> {
  let summary = "Gradient of mse_loss: 2 (prediction - target) * dloss / n";
  let description = [{ `dloss` is a scalar. }];
}

def Graph_EmbeddingBackwardOp : Graph_GradOp<"embedding_backward",
    (ins Graph_IntTensor:$ids, Graph_FloatTensor:$dy, I64Attr:$vocab),
    (outs Graph_FloatTensor:$dweight)> {
  let summary = "Gradient of embedding: rows of dy added at their ids";
  let description = [{ The result is `[vocab, D]` in `dy`'s dtype. }];
}

def Graph_SliceBackwardOp : Graph_GradOp<"slice_backward",
    (ins Graph_Tensor:$dy, DenseI64ArrayAttr:$axes, DenseI64ArrayAttr:$starts,
         DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$input_shape),
    (outs Graph_Tensor:$dx)> {
  let summary = "Gradient of slice: dy placed in a zero tensor of the input's shape";
  let description = [{ The attributes are the forward slice's. }];
}

#endif
