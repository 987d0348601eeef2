#ifndef AMPC_GRAPH_OPS
#define AMPC_GRAPH_OPS

include "ops/GraphBase.td"

//===----------------------------------------------------------------------===//
// Structure: the graph, its outputs, and its inputs, parameters and constants.
//===----------------------------------------------------------------------===//

def Graph_GraphOp : Graph_Op<"graph",
    [Symbol, IsolatedFromAbove, SingleBlock, NoRegionArguments]> {
  let summary = "A static computation graph";
  let description = [{
    Holds one graph in a single block, in topological order: `graph.input`,
    `graph.param` and `graph.const` values, the nodes, and a `graph.return` that
    lists the outputs. `loss`, when set, names the output that training
    minimises. Node names are unique, and so are value names. `model`, when
    set, records the zoo model that built the graph and its parameters, all
    strings (`{name = "llama", args = {layers = "2", ...}}`): what the tools
    need to rebuild it as a decode graph or describe it in a Hugging Face
    `config.json` (docs/graph-format.md, "Model record").
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OptionalAttr<StrAttr>:$loss,
                       OptionalAttr<DictionaryAttr>:$model);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
}

def Graph_ReturnOp : Graph_Op<"return", [Pure, HasParent<"GraphOp">, Terminator]> {
  let summary = "The graph's outputs";
  let description = [{
    Ends a `graph.graph` and lists its outputs; each keeps its name and dtype.
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$outputs);
  let assemblyFormat = "($outputs^ `:` type($outputs))? attr-dict";
}

def Graph_InputOp : Graph_Op<"input"> {
  let summary = "A graph input, fed with data at every step";
  let description = [{
    `%x = graph.input "x" : tensor<32x784xf32>` declares the input `x`.
  }];
  let arguments = (ins StrAttr:$name);
  let results = (outs Graph_Tensor:$value);
  let assemblyFormat = "$name attr-dict `:` type($value)";
}

def Graph_ParamOp : Graph_Op<"param"> {
  let summary = "A trainable parameter";
  let description = [{
    A named, persistent, trainable tensor. `init` says how training starts it:
    `{kind = "zeros"}`, `"ones"`, `"constant"` (`value`), `"normal"` (`mean`,
    `std`), `"uniform"` (`low`, `high`), `"xavier_uniform"`,
    `"kaiming_normal"` or `"data"` (`data`, a dense float tensor of the
    param's shape: pretrained values, such as an imported model's). `trainable = false` marks state that training keeps
    but does not differentiate (batch-norm running statistics).
    `master_dtype` (set by the AMP pass at O2) says that the optimizer keeps a
    master copy in that dtype (f32), updates it, and rewrites this
    low-precision copy from it; `init` initialises the master.
    `copy_of` (set by graph-fuse-weight-casts) marks the low-precision copy
    of the f32 param of that name, which the param's optimizer update
    rewrites: it reads as the cast of that param always would, is no
    training state of its own, and starts from (and follows) that param.
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<DictionaryAttr>:$init,
                       OptionalAttr<BoolAttr>:$trainable,
                       OptionalAttr<Graph_DtypeAttr>:$master_dtype,
                       OptionalAttr<StrAttr>:$copy_of);
  let results = (outs Graph_Tensor:$value);
  let assemblyFormat = "$name attr-dict `:` type($value)";
  let hasVerifier = 1;
}

def Graph_ConstOp : Graph_Op<"const", [Pure]> {
  let summary = "A named constant value of the graph";
  let description = [{
    A `const` value of the saved graph: its data is part of the graph.
  }];
  let arguments = (ins StrAttr:$name, ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Matrix ops (white).
//===----------------------------------------------------------------------===//

def Graph_MatmulOp : Graph_NodeOp<"matmul", "White",
    (ins Graph_FloatTensor:$a, Graph_FloatTensor:$b,
         DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
         DefaultValuedAttr<BoolAttr, "false">:$transpose_b),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Matrix product, batched over leading dimensions";
  let description = [{
    Multiplies the last two dimensions of `a` and `b` (each transposed first
    when its flag is set); leading (batch) dimensions broadcast like numpy.
    Both operands have rank 2 or more and the same dtype.
  }];
}

// FP8 GEMMs (docs/runtime.md, "FP8 GEMMs"): an operand is quantized with
// its delayed scale (fp8_scale_update), multiplied in FP8, and the product
// scaled back by the two scale inverses. Their dtypes are fixed (the AMP
// pass leaves them as they are; graph-fp8 writes them).
def Graph_Fp8QuantizeOp : Graph_NodeOp<"fp8_quantize", "None",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$scale, Graph_DtypeAttr:$to),
    (outs Graph_Tensor:$y, Graph_FloatTensor:$amax)> {
  let summary = "x * scale rounded to FP8, and the largest |x|";
  let description = [{
    `y` = x * scale (in f32) rounded to `to` (f8E4M3FN or f8E5M2: nearest
    even, saturating, docs/runtime.md "FP8"); `amax` (an f32 scalar) is the
    largest |x|, inf included and NaN ignored (as Transformer Engine's
    fmaxf), computed in the same pass. `scale` is an f32 scalar.
  }];
}

def Graph_Fp8MatmulOp : Graph_NodeOp<"fp8_matmul", "None",
    (ins Graph_Tensor:$a, Graph_Tensor:$b, Graph_FloatTensor:$a_scale_inv,
         Graph_FloatTensor:$b_scale_inv,
         DefaultValuedAttr<BoolAttr, "false">:$transpose_a,
         DefaultValuedAttr<BoolAttr, "false">:$transpose_b,
         Graph_DtypeAttr:$to, OptionalAttr<StrAttr>:$grad_scaling,
         OptionalAttr<Graph_DtypeAttr>:$grad_to),
    (outs Graph_FloatTensor:$y)> {
  let summary = "Matrix product of FP8 operands, scaled back, in `to`";
  let description = [{
    As `matmul` (batched, transposed, broadcast) of the FP8 operands' exact
    values, times a_scale_inv * b_scale_inv (f32 scalars, their product
    rounded to f32), rounded once to `to` (f32, f16 or bf16). `a` and `b`
    are f8E4M3FN or f8E5M2, not both f8E5M2 (no FP8 tensor core takes two).
    `grad_scaling` names the scaling state P (the params `P.amax_history`,
    `P.scale`, `P.scale_inv`) with which the backward quantizes the
    result's gradient to `grad_to` (f8E5M2 when left out); without it the
    op cannot be differentiated (docs/amp-policy.md, "FP8").
  }];
}

def Graph_Conv2dOp : Graph_NodeOp<"conv2d", "White",
    (ins Graph_FloatTensor:$x, Graph_FloatTensor:$filter,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$strides,
         DefaultValuedAttr<DenseI64ArrayAttr, "{0, 0}">:$padding,
         DefaultValuedAttr<DenseI64ArrayAttr, "{1, 1}">:$dilations,
         DefaultValuedAttr<I64Attr, "1">:$groups,
         DefaultValuedStrAttr<StrAttr, "NHWC">:$layout),
    (outs Graph_FloatTensor:$y)> {
  let summary = "2-D convolution";
  let description = [{
    `layout` is `NHWC` (filter `[Cout, KH, KW, Cin/groups]`) or `NCHW` (filter
    `[Cout, Cin/groups, KH, KW]`). `padding` is `[h, w]` or
    `[top, bottom, left, right]`.
  }];
}

//===----------------------------------------------------------------------===//
// Elementwise ops and activations (gray).
//===----------------------------------------------------------------------===//

def Graph_AddOp : Graph_BinaryOp<"add", "Elementwise sum">;
def Graph_SubOp : Graph_BinaryOp<"sub", "Elementwise difference">;
def Graph_MulOp : Graph_BinaryOp<"mul", "Elementwise product">;
def Graph_DivOp : Graph_BinaryOp<"div", "Elementwise quotient">;
def Graph_MaximumOp : Graph_BinaryOp<"maximum", "Elementwise maximum">;
def Graph_MinimumOp : Graph_BinaryOp<"minimum", "Elementwise minimum">;

def Graph_NegOp : Graph_UnaryOp<"neg", "Gray", "Elementwise negation">;
def Graph_AbsOp : Graph_UnaryOp<"abs", "Gray", "Elementwise absolute value">;
def Graph_ScaleOp : Graph_UnaryOp<"scale", "Gray", "Affine map x * scale + bias",
    (ins DefaultValuedAttr<F64Attr, "1.0">:$scale,
         DefaultValuedAttr<F64Attr, "0.0">:$bias)> {
  let description = [{ Computes `x * scale + bias` with scalar attributes. }];
}
def Graph_ReluOp : Graph_UnaryOp<"relu", "Gray", "max(x, 0)">;
def Graph_GeluOp : Graph_UnaryOp<"gelu", "Gray", "Gaussian error linear unit",
    (ins DefaultValuedAttr<BoolAttr, "false">:$approximate)> {
  let description = [{ Exact (erf) GELU, or the tanh form when `approximate`. }];
}
def Graph_TanhOp : Graph_UnaryOp<"tanh", "Gray", "Hyperbolic tangent">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "Gray", "Logistic sigmoid">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "Gray", "Gauss error function (bounded by 1: safe in L)">;
def Graph_DropoutOp : Graph_UnaryOp<"dropout", "Gray", "Inverted dropout",
    (ins DefaultValuedAttr<F64Attr, "0.5">:$rate,
         DefaultValuedAttr<I64Attr, "0">:$seed)> {
  let description = [{
    In training, zeroes each element with probability `rate` (a stream seeded
    by `seed` and the step) and scales the rest by 1/(1-rate); the identity
    otherwise. `rate` is in [0, 1).
  }];
  let inferBody = "";
}

//===----------------------------------------------------------------------===//
// Precision and constants (no AMP list).
//===----------------------------------------------------------------------===//

def Graph_CastOp : Graph_NodeOp<"cast", "None",
    (ins Graph_Tensor:$x, Graph_DtypeAttr:$to), (outs Graph_Tensor:$y)> {
  let summary = "Converts a tensor to another dtype";
  let description = [{
    Float to float conversions round to nearest even; the AMP pass inserts and
    folds these. Shapes are unchanged.
  }];
  let hasCanonicalizer = 1;
}

def Graph_ConstantOp : Graph_NodeOp<"constant", "None",
    (ins ElementsAttr:$value), (outs Graph_Tensor:$y)> {
  let summary = "A node producing a constant tensor";
  let description = [{ Produces `value`; its result has `value`'s type. }];
}

def Graph_FillOp : Graph_NodeOp<"fill", "None",
    (ins DefaultValuedAttr<F64Attr, "0.0">:$value), (outs Graph_Tensor:$y),
    [], /*agnostic=*/0, /*infer=*/0> {
  let summary = "A node producing a tensor filled with one value";
  let description = [{ Its result type is given explicitly. }];
}

include "ops/NnOps.td"
include "ops/GradOps.td"
include "ops/TrainOps.td"

#endif
