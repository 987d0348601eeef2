// The gradient rule of every forward op (GradientOpInterface). `g` comes in
// with one null entry per operand; a rule fills the ones flagged in `want`.
// A null result from the builder means a backward node failed to verify (the
// error is already emitted).
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc::graph {
namespace {

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

LogicalResult done(ArrayRef<Value> grads, ArrayRef<bool> want) {
  for (size_t i = 0; i < grads.size(); ++i)
    if (want[i] && !grads[i])
      return failure();
  return success();
}

NamedAttrList keep(Operation *op, ArrayRef<StringRef> names) {
  NamedAttrList attrs;
  for (StringRef n : names)
    if (Attribute a = op->getAttr(n))
      attrs.set(n, a);
  return attrs;
}

} // namespace

#define RULE(Op)                                                               \
  LogicalResult Op::buildGradients(GradBuilder &b, Value dy, ArrayRef<bool> want, \
                                   SmallVectorImpl<Value> &g)

// FP8 (docs/amp-policy.md, "FP8"): straight through the quantization, the
// gradient of x being that of the value its codes stand for.
RULE(Fp8QuantizeOp) {
  if (want[0])
    g[0] = b.cast(dy, elementType(getX().getType()));
  return done(g, want);
}

/// The param called `name` in `op`'s graph, or null.
static Value stateNamed(Operation *op, StringRef name) {
  Value found;
  op->getParentOfType<GraphOp>().walk([&](ParamOp p) {
    if (p.getName() == name)
      found = p.getValue();
  });
  return found;
}

/// Which of y = a·b's values a backward product reads: the forward's
/// operands, or y's gradient.
enum class Role { A, B, Dy };
struct RoleValue {
  Value v;
  Role role;
};
using Product = llvm::function_ref<Value(RoleValue, RoleValue, bool, bool)>;

/// The gradients of y = op(a)·op(b) from dy, through `product` (x, y,
/// transpose_x, transpose_y): a matmul, or an FP8 GEMM that scales each
/// operand back by its role's scale.
static LogicalResult matmulGradients(GradBuilder &b, Value a, Value bm, Value dy, bool ta,
                                     bool tb, ArrayRef<bool> want, SmallVectorImpl<Value> &g,
                                     Product product) {
  RoleValue A{a, Role::A}, B{bm, Role::B}, D{dy, Role::Dy};
  if (want[0]) {
    Value da = !ta ? product(D, B, false, !tb) : product(B, D, tb, true);
    g[0] = b.reduceTo(da, a);
  }
  if (want[1]) {
    int64_t rankA = shapeOf(a).size();
    if (shapeOf(bm).size() == 2 && rankA > 2 && !ta) {
      // One GEMM over all rows instead of a batch of GEMMs and a reduction.
      int64_t k = shapeOf(a).back(), n = shapeOf(dy).back();
      RoleValue a2{b.reshape(a, {-1, k}), Role::A}, dy2{b.reshape(dy, {-1, n}), Role::Dy};
      g[1] = !tb ? product(a2, dy2, true, false) : product(dy2, a2, true, false);
    } else {
      Value db = !tb ? (!ta ? product(A, D, true, false) : product(A, D, false, false))
                     : (!ta ? product(D, A, true, false) : product(D, A, true, true));
      g[1] = b.reduceTo(db, bm);
    }
  }
  return done(g, want);
}

// The result's gradient is quantized once with its own delayed scale (E5M2
// by default); both backward GEMMs read it and the forward's FP8 operands.
// The gradient of an FP8 operand is in `to`, the dtype of the values FP8
// stands in for.
RULE(Fp8MatmulOp) {
  std::optional<StringRef> state = getGradScaling();
  Value scale = state ? stateNamed(*this, (*state + ".scale").str()) : Value();
  Value scaleInv = state ? stateNamed(*this, (*state + ".scale_inv").str()) : Value();
  if (!scale || !scaleInv)
    return emitOpError("has no gradient scaling state (`grad_scaling` naming the params "
                       "P.scale and P.scale_inv): only FP8 GEMMs written by --dtype fp8 "
                       "can be trained");
  MLIRContext *ctx = getContext();
  NamedAttrList quantize;
  quantize.set("to", TypeAttr::get(getGradTo() ? *getGradTo() : Float8E5M2Type::get(ctx)));
  Value q = b.value("fp8_quantize", {dy, scale}, quantize, "grad_fp8");
  auto inverse = [&](Role r) {
    return r == Role::A ? getAScaleInv() : r == Role::B ? getBScaleInv() : scaleInv;
  };
  auto gemm = [&](RoleValue x, RoleValue y, bool tx, bool ty) {
    NamedAttrList attrs;
    attrs.set("transpose_a", BoolAttr::get(ctx, tx));
    attrs.set("transpose_b", BoolAttr::get(ctx, ty));
    attrs.set("to", getToAttr());
    return b.value("fp8_matmul", {x.v, y.v, inverse(x.role), inverse(y.role)}, attrs);
  };
  return matmulGradients(b, getA(), getB(), q, getTransposeA(), getTransposeB(), want, g, gemm);
}

RULE(MatmulOp) {
  auto matmul = [&](RoleValue x, RoleValue y, bool tx, bool ty) {
    return b.matmul(x.v, y.v, tx, ty);
  };
  return matmulGradients(b, getA(), getB(), dy, getTransposeA(), getTransposeB(), want, g,
                         matmul);
}

RULE(Conv2dOp) {
  NamedAttrList attrs =
      keep(*this, {"strides", "padding", "dilations", "groups", "layout"});
  if (want[0]) {
    NamedAttrList a = attrs;
    a.set("input_shape", b.builder().getDenseI64ArrayAttr(shapeOf(getX())));
    g[0] = b.value("conv2d_backward_input", {dy, getFilter()}, a, "grad_input");
  }
  if (want[1]) {
    NamedAttrList a = attrs;
    a.set("filter_shape", b.builder().getDenseI64ArrayAttr(shapeOf(getFilter())));
    g[1] = b.value("conv2d_backward_filter", {getX(), dy}, a, "grad_filter");
  }
  return done(g, want);
}

RULE(AddOp) {
  if (want[0]) g[0] = b.reduceTo(dy, getLhs());
  if (want[1]) g[1] = b.reduceTo(dy, getRhs());
  return done(g, want);
}

RULE(SubOp) {
  if (want[0]) g[0] = b.reduceTo(dy, getLhs());
  if (want[1]) g[1] = b.reduceTo(b.neg(dy), getRhs());
  return done(g, want);
}

RULE(MulOp) {
  if (want[0]) g[0] = b.reduceTo(b.mul(dy, getRhs()), getLhs());
  if (want[1]) g[1] = b.reduceTo(b.mul(dy, getLhs()), getRhs());
  return done(g, want);
}

RULE(DivOp) {
  if (want[0]) g[0] = b.reduceTo(b.div(dy, getRhs()), getLhs());
  if (want[1]) g[1] = b.reduceTo(b.neg(b.div(b.mul(dy, getY()), getRhs())), getRhs());
  return done(g, want);
}

static LogicalResult minMax(GradBuilder &b, Operation *op, StringRef fn, Value dy,
                            ArrayRef<bool> want, SmallVectorImpl<Value> &g) {
  NamedAttrList attrs;
  attrs.set("fn", b.builder().getStringAttr(fn));
  Operation *both = b.node("minmax_backward", {op->getOperand(0), op->getOperand(1), dy}, attrs);
  if (!both)
    return failure();
  if (want[0]) g[0] = b.reduceTo(both->getResult(0), op->getOperand(0));
  if (want[1]) g[1] = b.reduceTo(both->getResult(1), op->getOperand(1));
  return done(g, want);
}

RULE(MaximumOp) { return minMax(b, *this, "max", dy, want, g); }
RULE(MinimumOp) { return minMax(b, *this, "min", dy, want, g); }

RULE(NegOp) {
  g[0] = b.neg(dy);
  return done(g, want);
}

RULE(ScaleOp) {
  g[0] = b.scale(dy, getScale().convertToDouble());
  return done(g, want);
}

#define UNARY_RULE(Op, fn)                                                     \
  RULE(Op) {                                                                   \
    g[0] = b.unaryBackward(fn, getX(), getY(), dy);                            \
    return done(g, want);                                                      \
  }
UNARY_RULE(AbsOp, "abs")
UNARY_RULE(TanhOp, "tanh")
UNARY_RULE(SigmoidOp, "sigmoid")
UNARY_RULE(ErfOp, "erf")
UNARY_RULE(ExpOp, "exp")
UNARY_RULE(LogOp, "log")
UNARY_RULE(SqrtOp, "sqrt")
UNARY_RULE(RsqrtOp, "rsqrt")
UNARY_RULE(SquareOp, "square")
UNARY_RULE(SinOp, "sin")
UNARY_RULE(CosOp, "cos")
#undef UNARY_RULE

// relu's derivative reads its output in place of its input (y > 0 exactly
// when x > 0, NaN included): the input need not live until the backward,
// and a GEMM epilogue can take the relu (compiler/plan/GemmEpilogues.cpp).
RULE(ReluOp) {
  g[0] = b.unaryBackward("relu", getY(), getY(), dy);
  return done(g, want);
}

RULE(GeluOp) {
  g[0] = b.unaryBackward(getApproximate() ? "gelu_tanh" : "gelu", getX(), getY(), dy);
  return done(g, want);
}

RULE(PowOp) {
  g[0] = b.unaryBackward("pow", getX(), getY(), dy, getExponent().convertToDouble());
  return done(g, want);
}

RULE(DropoutOp) {
  // The same rate and seed regenerate the forward mask in the same step.
  g[0] = b.value("dropout", {dy}, keep(*this, {"rate", "seed"}));
  return done(g, want);
}

RULE(IdentityOp) {
  g[0] = dy;
  return done(g, want);
}

RULE(ReshapeOp) {
  g[0] = b.reshape(dy, shapeOf(getX()));
  return done(g, want);
}

RULE(FlattenOp) {
  g[0] = b.reshape(dy, shapeOf(getX()));
  return done(g, want);
}

RULE(TransposeOp) {
  ArrayRef<int64_t> perm = getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inverse[perm[i]] = i;
  g[0] = b.transpose(dy, inverse);
  return done(g, want);
}

RULE(ConcatOp) {
  int64_t rank = shapeOf(dy).size(), axis = getAxis() < 0 ? getAxis() + rank : getAxis();
  int64_t start = 0;
  for (size_t i = 0; i < getInputs().size(); ++i) {
    int64_t size = shapeOf(getInputs()[i])[axis];
    if (want[i]) {
      NamedAttrList attrs;
      attrs.set("axes", b.builder().getDenseI64ArrayAttr({axis}));
      attrs.set("starts", b.builder().getDenseI64ArrayAttr({start}));
      attrs.set("ends", b.builder().getDenseI64ArrayAttr({start + size}));
      g[i] = b.value("slice", {dy}, attrs);
    }
    start += size;
  }
  return done(g, want);
}

RULE(SliceOp) {
  NamedAttrList attrs = keep(*this, {"axes", "starts", "ends"});
  attrs.set("input_shape", b.builder().getDenseI64ArrayAttr(shapeOf(getX())));
  g[0] = b.value("slice_backward", {dy}, attrs);
  return done(g, want);
}

RULE(MaxPool2dOp) {
  g[0] = b.value("max_pool2d_backward", {getX(), dy},
                 keep(*this, {"kernel", "strides", "padding", "layout"}));
  return done(g, want);
}

RULE(AvgPool2dOp) {
  NamedAttrList attrs = keep(*this, {"kernel", "strides", "padding", "layout"});
  attrs.set("input_shape", b.builder().getDenseI64ArrayAttr(shapeOf(getX())));
  g[0] = b.value("avg_pool2d_backward", {dy}, attrs);
  return done(g, want);
}

RULE(GlobalAvgPoolOp) {
  ArrayRef<int64_t> x = shapeOf(getX());
  bool nhwc = getLayout() == "NHWC";
  int64_t n = x[0], c = nhwc ? x[3] : x[1], hw = nhwc ? x[1] * x[2] : x[2] * x[3];
  Value shaped = b.reshape(dy, nhwc ? SmallVector<int64_t>{n, 1, 1, c}
                                    : SmallVector<int64_t>{n, c, 1, 1});
  g[0] = b.scale(b.broadcastTo(shaped, x), 1.0 / double(hw));
  return done(g, want);
}

RULE(BatchNormOp) {
  Operation *bw = b.node("batch_norm_backward", {getX(), dy, getScale()},
                         keep(*this, {"epsilon", "layout"}));
  if (!bw)
    return failure();
  for (int i = 0; i < 3; ++i)
    if (want[i]) g[i] = bw->getResult(i);
  return done(g, want); // running statistics have no gradient
}

RULE(LayerNormOp) {
  Operation *bw = b.node("layer_norm_backward", {getX(), dy, getScale()},
                         keep(*this, {"epsilon", "axis"}));
  if (!bw)
    return failure();
  for (int i = 0; i < 3; ++i)
    if (want[i]) g[i] = bw->getResult(i);
  return done(g, want);
}

static Value reduceBackward(GradBuilder &b, Value x, Value dy, ArrayRef<int64_t> axes,
                            bool keepdims, bool mean) {
  ArrayRef<int64_t> shape = shapeOf(x);
  SmallVector<int64_t> kept(shape.begin(), shape.end());
  int64_t count = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    bool reduced = axes.empty() ||
                   llvm::any_of(axes, [&](int64_t a) { return (a < 0 ? a + (int64_t)shape.size() : a) == (int64_t)d; });
    if (reduced) {
      kept[d] = 1;
      count *= shape[d];
    }
  }
  Value g = b.broadcastTo(b.reshape(dy, kept), shape);
  return mean ? b.scale(g, 1.0 / double(count)) : g;
}

RULE(ReduceSumOp) {
  g[0] = reduceBackward(b, getX(), dy, getAxes(), getKeepdims(), false);
  return done(g, want);
}

RULE(ReduceMeanOp) {
  g[0] = reduceBackward(b, getX(), dy, getAxes(), getKeepdims(), true);
  return done(g, want);
}

RULE(SoftmaxOp) {
  g[0] = b.value("softmax_backward", {getY(), dy}, keep(*this, {"axis"}));
  return done(g, want);
}

RULE(AttentionOp) {
  if (want.size() > 3 && want[3])
    return emitError("the bias of attention '" + getName() +
                     "' has no gradient (it takes masks and fixed biases): compute it from "
                     "no parameter, or write the attention unfused");
  SmallVector<Value> operands = {getQ(), getK(), getV(), getY(), dy};
  if (getBias())
    operands.push_back(getBias());
  Operation *bw = b.node("attention_backward", operands,
                         keep(*this, {"causal", "scale", "dropout", "seed"}));
  if (!bw)
    return failure();
  for (int i = 0; i < 3; ++i)
    if (want[i]) g[i] = bw->getResult(i);
  return done(g, want);
}

RULE(LogSoftmaxOp) {
  NamedAttrList attrs = keep(*this, {"axis"});
  attrs.set("log", b.builder().getBoolAttr(true));
  g[0] = b.value("softmax_backward", {getY(), dy}, attrs);
  return done(g, want);
}

RULE(EmbeddingOp) {
  if (want[1]) {
    NamedAttrList attrs;
    attrs.set("vocab", b.builder().getI64IntegerAttr(shapeOf(getWeight())[0]));
    g[1] = b.value("embedding_backward", {getIds(), dy}, attrs);
  }
  return done(g, want);
}

RULE(SoftmaxCrossEntropyOp) {
  if (want.size() > 2 && want[2])
    return emitError("the class weights of cross entropy '" + getName() +
                     "' have no gradient: make them a const, or a param with trainable = false");
  SmallVector<Value> operands = {getLogits(), getLabels(), dy};
  if (getWeight())
    operands.push_back(getWeight());
  if (want[0])
    g[0] = b.value("softmax_cross_entropy_backward", operands,
                   keep(getOperation(), {"label_smoothing", "ignore_index", "reduction"}));
  return done(g, want);
}

RULE(MseLossOp) {
  Value dp = b.value("mse_loss_backward", {getPrediction(), getTarget(), dy});
  if (want[0]) g[0] = dp;
  if (want[1]) g[1] = dp ? b.neg(dp) : Value();
  return done(g, want);
}

RULE(CastOp) {
  // Gradients of f32 values come back in f32 through the cast.
  g[0] = b.cast(dy, elementType(getX().getType()));
  return done(g, want);
}

RULE(ConstantOp) { return success(); }
RULE(FillOp) { return success(); }

#undef RULE

} // namespace ampc::graph
