// The builder's one-function-per-op layer over GraphBuilder::node. Attributes
// equal to their op default are left out, so saved graphs stay short.
#include "compiler/GraphBuilder.h"
#include "compiler/DenseData.h"

using namespace mlir;

namespace ampc {
namespace {

struct Attrs {
  OpBuilder &b;
  NamedAttrList list;
  Attrs &flag(StringRef name, bool v, bool dflt = false) {
    if (v != dflt) list.set(name, b.getBoolAttr(v));
    return *this;
  }
  Attrs &i64(StringRef name, int64_t v, std::optional<int64_t> dflt = std::nullopt) {
    if (!dflt || v != *dflt) list.set(name, b.getI64IntegerAttr(v));
    return *this;
  }
  Attrs &f64(StringRef name, double v, std::optional<double> dflt = std::nullopt) {
    if (!dflt || v != *dflt) list.set(name, b.getF64FloatAttr(v));
    return *this;
  }
  Attrs &ints(StringRef name, ArrayRef<int64_t> v,
              std::optional<std::vector<int64_t>> dflt = std::nullopt) {
    if (!dflt || v != ArrayRef<int64_t>(*dflt)) list.set(name, b.getDenseI64ArrayAttr(v));
    return *this;
  }
  Attrs &str(StringRef name, StringRef v, StringRef dflt) {
    if (v != dflt) list.set(name, b.getStringAttr(v));
    return *this;
  }
};

} // namespace

#define AMPC_BINARY(fn, op)                                                    \
  Tensor GraphBuilder::fn(Tensor a, Tensor b, StringRef name) {                \
    return node(op, {a, b}, {}, name);                                         \
  }
AMPC_BINARY(add, "add")
AMPC_BINARY(sub, "sub")
AMPC_BINARY(mul, "mul")
AMPC_BINARY(div, "div")
AMPC_BINARY(maximum, "maximum")
AMPC_BINARY(minimum, "minimum")
#undef AMPC_BINARY

Tensor GraphBuilder::unary(StringRef op, Tensor x, StringRef name) {
  return node(op, {x}, {}, name);
}

Tensor GraphBuilder::matmul(Tensor a, Tensor b, bool ta, bool tb, StringRef name) {
  Attrs at{builder_};
  at.flag("transpose_a", ta).flag("transpose_b", tb);
  return node("matmul", {a, b}, at.list, name);
}

Tensor GraphBuilder::conv2d(Tensor x, Tensor filter, const Conv2dAttrs &c, StringRef name) {
  Attrs at{builder_};
  at.ints("strides", c.strides, {{1, 1}})
      .ints("padding", c.padding, {{0, 0}})
      .ints("dilations", c.dilations, {{1, 1}})
      .i64("groups", c.groups, 1)
      .str("layout", c.layout, "NHWC");
  return node("conv2d", {x, filter}, at.list, name);
}

Tensor GraphBuilder::gelu(Tensor x, bool approximate, StringRef name) {
  Attrs at{builder_};
  at.flag("approximate", approximate);
  return node("gelu", {x}, at.list, name);
}

Tensor GraphBuilder::scale(Tensor x, double s, double bias, StringRef name) {
  Attrs at{builder_};
  at.f64("scale", s, 1.0).f64("bias", bias, 0.0);
  return node("scale", {x}, at.list, name);
}

Tensor GraphBuilder::dropout(Tensor x, double rate, int64_t seed, StringRef name) {
  Attrs at{builder_};
  at.f64("rate", rate, 0.5).i64("seed", seed, 0);
  return node("dropout", {x}, at.list, name);
}

Tensor GraphBuilder::pow(Tensor x, double exponent, StringRef name) {
  Attrs at{builder_};
  at.f64("exponent", exponent);
  return node("pow", {x}, at.list, name);
}

Tensor GraphBuilder::reshape(Tensor x, ArrayRef<int64_t> shape, StringRef name) {
  Attrs at{builder_};
  at.ints("shape", shape);
  return node("reshape", {x}, at.list, name);
}

Tensor GraphBuilder::transpose(Tensor x, ArrayRef<int64_t> perm, StringRef name) {
  Attrs at{builder_};
  at.ints("perm", perm);
  return node("transpose", {x}, at.list, name);
}

Tensor GraphBuilder::flatten(Tensor x, int64_t axis, StringRef name) {
  Attrs at{builder_};
  at.i64("axis", axis, 1);
  return node("flatten", {x}, at.list, name);
}

Tensor GraphBuilder::concat(ArrayRef<Tensor> xs, int64_t axis, StringRef name) {
  Attrs at{builder_};
  at.i64("axis", axis, 0);
  return node("concat", xs, at.list, name);
}

Tensor GraphBuilder::slice(Tensor x, ArrayRef<int64_t> axes, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> ends, StringRef name) {
  Attrs at{builder_};
  at.ints("axes", axes).ints("starts", starts).ints("ends", ends);
  return node("slice", {x}, at.list, name);
}

static NamedAttrList poolAttrs(OpBuilder &b, const Pool2dAttrs &p) {
  Attrs at{b};
  at.ints("kernel", p.kernel).ints("padding", p.padding, {{0, 0}}).str("layout", p.layout, "NHWC");
  if (!p.strides.empty())
    at.ints("strides", p.strides);
  return at.list;
}

Tensor GraphBuilder::maxPool2d(Tensor x, const Pool2dAttrs &p, StringRef name) {
  return node("max_pool2d", {x}, poolAttrs(builder_, p), name);
}

Tensor GraphBuilder::avgPool2d(Tensor x, const Pool2dAttrs &p, StringRef name) {
  return node("avg_pool2d", {x}, poolAttrs(builder_, p), name);
}

Tensor GraphBuilder::globalAvgPool(Tensor x, StringRef layout, StringRef name) {
  Attrs at{builder_};
  at.str("layout", layout, "NHWC");
  return node("global_avg_pool", {x}, at.list, name);
}

Tensor GraphBuilder::batchNorm(Tensor x, Tensor s, Tensor bias, Tensor mean, Tensor var,
                               double eps, double momentum, StringRef layout,
                               StringRef name) {
  Attrs at{builder_};
  at.f64("epsilon", eps, 1e-5).f64("momentum", momentum, 0.9).str("layout", layout, "NHWC");
  return node("batch_norm", {x, s, bias, mean, var}, at.list, name);
}

Tensor GraphBuilder::layerNorm(Tensor x, Tensor s, Tensor bias, double eps, int64_t axis,
                               StringRef name) {
  Attrs at{builder_};
  at.f64("epsilon", eps, 1e-5).i64("axis", axis, -1);
  return node("layer_norm", {x, s, bias}, at.list, name);
}

Tensor GraphBuilder::reduceSum(Tensor x, ArrayRef<int64_t> axes, bool keepdims,
                               StringRef name) {
  Attrs at{builder_};
  at.ints("axes", axes, std::vector<int64_t>{}).flag("keepdims", keepdims);
  return node("reduce_sum", {x}, at.list, name);
}

Tensor GraphBuilder::reduceMean(Tensor x, ArrayRef<int64_t> axes, bool keepdims,
                                StringRef name) {
  Attrs at{builder_};
  at.ints("axes", axes, std::vector<int64_t>{}).flag("keepdims", keepdims);
  return node("reduce_mean", {x}, at.list, name);
}

Tensor GraphBuilder::softmax(Tensor x, int64_t axis, StringRef name) {
  Attrs at{builder_};
  at.i64("axis", axis, -1);
  return node("softmax", {x}, at.list, name);
}

Tensor GraphBuilder::attention(Tensor q, Tensor k, Tensor v, bool causal,
                               std::optional<double> scale, StringRef name, double dropout,
                               int64_t seed, std::optional<Tensor> bias) {
  Attrs at{builder_};
  at.flag("causal", causal);
  if (scale)
    at.list.set("scale", builder_.getF64FloatAttr(*scale));
  at.f64("dropout", dropout, 0.0).i64("seed", seed, 0);
  if (bias)
    return node("attention", {q, k, v, *bias}, at.list, name);
  return node("attention", {q, k, v}, at.list, name);
}

Tensor GraphBuilder::logSoftmax(Tensor x, int64_t axis, StringRef name) {
  Attrs at{builder_};
  at.i64("axis", axis, -1);
  return node("log_softmax", {x}, at.list, name);
}

Tensor GraphBuilder::embedding(Tensor ids, Tensor weight, StringRef name) {
  return node("embedding", {ids, weight}, {}, name);
}

Tensor GraphBuilder::softmaxCrossEntropy(Tensor logits, Tensor labels, StringRef name,
                                         double labelSmoothing,
                                         std::optional<int64_t> ignoreIndex,
                                         std::optional<Tensor> classWeights,
                                         StringRef reduction) {
  Attrs at{builder_};
  at.f64("label_smoothing", labelSmoothing, 0.0);
  if (ignoreIndex)
    at.list.set("ignore_index", builder_.getI64IntegerAttr(*ignoreIndex));
  if (reduction != "mean")
    at.list.set("reduction", builder_.getStringAttr(reduction));
  if (classWeights)
    return node("softmax_cross_entropy", {logits, labels, *classWeights}, at.list, name);
  return node("softmax_cross_entropy", {logits, labels}, at.list, name);
}

Tensor GraphBuilder::mseLoss(Tensor prediction, Tensor target, StringRef name) {
  return node("mse_loss", {prediction, target}, {}, name);
}

Tensor GraphBuilder::cast(Tensor x, StringRef dtype, StringRef name) {
  NamedAttrList attrs;
  attrs.set("to", TypeAttr::get(tensorType({}, dtype).getElementType()));
  return node("cast", {x}, attrs, name);
}

Tensor GraphBuilder::constant(ArrayRef<int64_t> shape, ArrayRef<double> data,
                              StringRef dtype, StringRef name) {
  RankedTensorType type = tensorType(shape, dtype);
  if ((int64_t)data.size() != type.getNumElements())
    throw GraphError("node '" + qualify(name.empty() ? "constant" : name) +
                     "': data does not fill the shape");
  NamedAttrList attrs;
  attrs.set("value", denseFromDoubles(type, data));
  return node("constant", {}, attrs, name);
}

Tensor GraphBuilder::fill(ArrayRef<int64_t> shape, double value, StringRef dtype,
                          StringRef name) {
  Attrs at{builder_};
  at.f64("value", value, 0.0);
  return node("fill", {}, at.list, name, {tensorType(shape, dtype)});
}

} // namespace ampc
