#ifndef AMPC_NN_OPS
#define AMPC_NN_OPS

//===----------------------------------------------------------------------===//
// Data movement (gray, precision-agnostic).
//===----------------------------------------------------------------------===//

def Graph_IdentityOp : Graph_UnaryOp<"identity", "Gray", "Returns its operand",
    (ins), [], /*agnostic=*/1, Graph_Tensor>;

def Graph_ReshapeOp : Graph_NodeOp<"reshape", "Gray",
    (ins Graph_Tensor:$x, DenseI64ArrayAttr:$shape), (outs Graph_Tensor:$y),
    [], /*agnostic=*/1> {
  let summary = "Reinterprets a tensor with another shape";
  let description = [{
    `shape` has the same element count as `x`; one entry may be -1 (inferred).
  }];
}

def Graph_TransposeOp : Graph_NodeOp<"transpose", "Gray",
    (ins Graph_Tensor:$x, DenseI64ArrayAttr:$perm), (outs Graph_Tensor:$y),
    [], /*agnostic=*/1> {
  let summary = "Permutes dimensions";
  let description = [{ Result dimension i is operand dimension `perm[i]`. }];
}

def Graph_FlattenOp : Graph_NodeOp<"flatten", "Gray",
    (ins Graph_Tensor:$x, DefaultValuedAttr<I64Attr, "1">:$axis),
    (outs Graph_Tensor:$y), [], /*agnostic=*/1> {
  let summary = "Collapses to a matrix";
  let description = [{
    The result is `[prod(dims[:axis]), prod(dims[axis:])]`.
  }];
}

def Graph_ConcatOp : Graph_NodeOp<"concat", "Gray",
    (ins Variadic<Graph_Tensor>:$inputs, DefaultValuedAttr<I64Attr, "0">:$axis),
    (outs Graph_Tensor:$y), [], /*agnostic=*/1> {
  let summary = "Joins tensors along an axis";
  let description = [{
    All operands share dtype, rank and every dimension but `axis`.
  }];
}

def Graph_SliceOp : Graph_NodeOp<"slice", "Gray",
    (ins Graph_Tensor:$x, DenseI64ArrayAttr:$axes, DenseI64ArrayAttr:$starts,
         DenseI64ArrayAttr:$ends),
    (outs Graph_Tensor:$y), [], /*agnostic=*/1> {
  let summary = "Takes a contiguous range along some axes";
  let description = [{
    For each `axes[i]`, keeps `[starts[i], ends[i])`; negative indices count
    from the end and ranges are clamped, as in numpy.
  }];
}

def Graph_MaxPool2dOp : Graph_NodeOp<"max_pool2d", "Gray",
    (ins Graph_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
         OptionalAttr<DenseI64ArrayAttr>:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$y), [], /*agnostic=*/1> {
  let summary = "2-D max pooling";
  let description = [{
    Window `kernel` `[kh, kw]`; `strides` default to the kernel; padding cells
    never win.
  }];
}

//===----------------------------------------------------------------------===//
// Pooling and normalisation (gray).
//===----------------------------------------------------------------------===//

def Graph_AvgPool2dOp : Graph_NodeOp<"avg_pool2d", "Gray",
    (ins Graph_FloatTensor:$x, DenseI64ArrayAttr:$kernel,
         OptionalAttr<DenseI64ArrayAttr>:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$y)> {
  let summary = "2-D average pooling";
  let description = [{
    Averages over the window, not counting padding; `strides` default to the
    kernel.
  }];
}

def Graph_GlobalAvgPoolOp : Graph_NodeOp<"global_avg_pool", "Gray",
    (ins Graph_FloatTensor:$x, DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Mean over the spatial dimensions";
  let description = [{ Maps a 4-D image batch to `[N, C]`. }];
}

def Graph_BatchNormOp : Graph_NodeOp<"batch_norm", "Gray",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$scale, Graph_FloatTensor:$bias,
         Graph_FloatTensor:$mean, Graph_FloatTensor:$variance,
         DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
         DefaultValuedAttr<F64Attr, "0.9">:$momentum,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Batch normalisation over the channel axis";
  let description = [{
    The channel axis is the last one for `NHWC` and 1 for `NCHW`. `scale`,
    `bias`, `mean` and `variance` are `[C]` and may stay f32 while `x` is in
    low precision. Training normalises with the batch statistics and moves the
    running ones by `momentum`; inference uses the running statistics.
  }];
  let ampExtraDecl = [{
    static bool keepsOperandF32(unsigned index) { return index >= 1; }
  }];
}

def Graph_LayerNormOp : Graph_NodeOp<"layer_norm", "Black",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$scale, Graph_FloatTensor:$bias,
         DefaultValuedAttr<F64Attr, "1.0e-5">:$epsilon,
         DefaultValuedAttr<I64Attr, "-1">:$axis),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Layer normalisation over the trailing dimensions";
  let description = [{
    Normalises over dimensions `axis..rank-1`; `scale` and `bias` have those
    dimensions' shape.
  }];
}

//===----------------------------------------------------------------------===//
// Numerically sensitive math (black).
//===----------------------------------------------------------------------===//

def Graph_ExpOp : Graph_UnaryOp<"exp", "Black", "Elementwise e^x">;
def Graph_LogOp : Graph_UnaryOp<"log", "Black", "Elementwise natural log">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "Black", "Elementwise square root">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", "Black", "Elementwise 1/sqrt(x)">;
def Graph_SquareOp : Graph_UnaryOp<"square", "Black", "Elementwise x*x">;
def Graph_SinOp : Graph_UnaryOp<"sin", "Black", "Elementwise sine (radians)"> {
  let description = [{
    Black: an argument rounded to f16 keeps its phase only to half an ulp,
    0.25 rad at 512 (the angles of rotary position embeddings reach the
    sequence length).
  }];
}
def Graph_CosOp : Graph_UnaryOp<"cos", "Black", "Elementwise cosine (radians)"> {
  let description = [{ Black, as `sin` is. }];
}
def Graph_PowOp : Graph_UnaryOp<"pow", "Black", "Elementwise x^exponent",
    (ins F64Attr:$exponent)> {
  let description = [{ Raises every element to the scalar `exponent`. }];
}

class Graph_ReduceOp<string mnemonic, string summaryText>
    : Graph_NodeOp<mnemonic, "Black",
        (ins Graph_FloatTensor:$x,
             DefaultValuedAttr<DenseI64ArrayAttr, "{}">:$axes,
             DefaultValuedAttr<BoolAttr, "false">:$keepdims),
        (outs Graph_FloatTensor:$y)> {
  let summary = summaryText;
  let description = [{
    Reduces over `axes` (all axes when empty), keeping them as size 1 when
    `keepdims`.
  }];
}
def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", "Sum over axes">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", "Mean over axes">;

def Graph_SoftmaxOp : Graph_UnaryOp<"softmax", "Black", "Softmax along an axis",
    (ins DefaultValuedAttr<I64Attr, "-1">:$axis)> {
  let description = [{ Normalised exponentials along `axis`. }];
  let inferBody = "";
}
def Graph_LogSoftmaxOp : Graph_UnaryOp<"log_softmax", "Black",
    "Log of softmax along an axis", (ins DefaultValuedAttr<I64Attr, "-1">:$axis)> {
  let description = [{ `x - logsumexp(x)` along `axis`, computed stably. }];
  let inferBody = "";
}

def Graph_EmbeddingOp : Graph_NodeOp<"embedding", "Black",
    (ins Graph_IntTensor:$ids, Graph_FloatTensor:$weight),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Looks rows of a table up by index";
  let description = [{
    `weight` is `[V, D]`; the result is `ids.shape + [D]` in `weight`'s dtype.
  }];
}

//===----------------------------------------------------------------------===//
// Losses (black).
//===----------------------------------------------------------------------===//

def Graph_SoftmaxCrossEntropyOp : Graph_NodeOp<"softmax_cross_entropy", "Black",
    (ins Graph_FloatTensor:$logits, Graph_IntTensor:$labels,
         Optional<Graph_FloatTensor>:$weight,
         DefaultValuedAttr<F64Attr, "0.0">:$label_smoothing,
         OptionalAttr<I64Attr>:$ignore_index,
         DefaultValuedAttr<StrAttr, "\"mean\"">:$reduction),
    (outs Graph_FloatTensor:$loss)> {
  let summary = "Cross entropy of softmax(logits) against integer labels, mean, sum or per row";
  let description = [{
    `logits` is `[..., C]` and `labels` has its shape without the last
    dimension; the result is the scalar mean over all rows (see `reduction`). f16 or bf16
    logits are widened to f32 inside (exactly) and the loss is f32, so the
    AMP pass feeds low-precision logits without an f32 copy.

    As PyTorch's `cross_entropy`: with `label_smoothing` e in [0, 1] the
    target of a row is (1 - e) on its label plus e / C on every class; rows
    whose label is `ignore_index` count for nothing, and the mean is over
    the other rows (0, with no gradient, when every row is ignored).
    Any other label outside [0, C) is an error at run time. An optional
    `weight`, f32 `[C]`, weighs each class as PyTorch's `weight=`: a row
    counts its label's weight (in the loss and in the mean's divisor), and
    the smoothing's share of class c is weighed by `weight[c]`. It stays
    f32 under AMP and has no gradient. `reduction` "sum" (PyTorch's
    `reduction="sum"`) gives the counted rows' sum instead of their mean;
    "none" gives each row's loss, in the labels' shape (0 on an ignored
    row, its label's weight not divided out), for a graph that weighs or
    masks rows itself before it reduces them to the loss.
  }];
  let ampExtraDecl = [{
    static bool widensOperand(unsigned index) { return index == 0; }
  }];
}

def Graph_AttentionOp : Graph_NodeOp<"attention", "White",
    (ins Graph_FloatTensor:$q, Graph_FloatTensor:$k, Graph_FloatTensor:$v,
         Optional<Graph_FloatTensor>:$bias,
         DefaultValuedAttr<BoolAttr, "false">:$causal,
         OptionalAttr<F64Attr>:$scale,
         DefaultValuedAttr<F64Attr, "0.0">:$dropout,
         DefaultValuedAttr<I64Attr, "0">:$seed),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Scaled dot-product attention, fused (softmax(q k^T scale) v)";
  let description = [{
    `q` is `[batch, seq_q, heads, head_dim]`, `k` `[batch, seq_k, heads,
    head_dim]` and `v` `[batch, seq_k, heads, head_dim_v]`: the projections'
    `[batch, seq, hidden]` results reshaped, with no transpose. The result is
    `[batch, seq_q, heads, head_dim_v]` in the operands' dtype. `scale`
    defaults to 1/sqrt(head_dim); with `causal`, query i attends to keys
    j <= i. No seq_q x seq_k matrix is stored: the softmax runs online over
    tiles of keys, its running maximum and sum in f32 (docs/runtime.md,
    "Attention"); the gradient recomputes the scores. In training,
    `dropout` in [0, 1) zeroes each probability with that rate and scales
    the rest by 1/(1-dropout), with the bits `dropout` would draw for the
    `[batch, heads, seq_q, seq_k]` probabilities from `seed` and the step.
    An optional `bias` is added to the scaled scores before the softmax: an
    additive mask (0 where a key is seen, -inf or a large negative number
    where not) or a positional bias, rank 4 and broadcast to `[batch,
    heads, seq_q, seq_k]` (each dimension that or 1). It stays f32 under
    AMP and has no gradient.
  }];
  let ampExtraDecl = [{
    static bool keepsOperandF32(unsigned index) { return index == 3; }
  }];
}

def Graph_MseLossOp : Graph_NodeOp<"mse_loss", "Black",
    (ins Graph_FloatTensor:$prediction, Graph_FloatTensor:$target),
    (outs Graph_FloatTensor:$loss)> {
  let summary = "Mean squared error";
  let description = [{
    Both operands have one shape and dtype; the result is the scalar mean of
    the squared differences.
  }];
}

#endif
