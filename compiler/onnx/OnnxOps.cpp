// ONNX ops as graph ops (docs/onnx.md lists them, with what each supports).
// Attributes the graph dialect has no counterpart for are refused with an
// error naming the node, never dropped.
#include "compiler/onnx/OnnxImporter.h"

#include "ops/GraphNames.h"

namespace ampc::onnx_import {
namespace {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

mlir::Builder &B(Importer &im) { return im.b.opBuilder(); }
mlir::Attribute ints(Importer &im, llvm::ArrayRef<int64_t> v) {
  return B(im).getDenseI64ArrayAttr(v);
}

void requireRank(Importer &im, const NodeProto &n, Tensor t, int64_t rank) {
  if (t.rank() != rank)
    throw im.fail(n, "only rank-" + std::to_string(rank) + " inputs are supported, got rank " +
                         std::to_string(t.rank()));
}

void refuseAttr(Importer &im, const NodeProto &n, const char *key, int64_t allowed) {
  if (im.attr(n, key) && im.attrInt(n, key, allowed) != allowed)
    throw im.fail(n, std::string("attribute ") + key + " = " +
                         std::to_string(im.attrInt(n, key, allowed)) + " is not supported");
}

/// ONNX pads [x1_begin, x2_begin, x1_end, x2_end] as the dialect's [t, b, l, r];
/// auto_pad SAME_* is resolved from the (static) input size.
std::vector<int64_t> pads2d(Importer &im, const NodeProto &n, Tensor x,
                            llvm::ArrayRef<int64_t> kernel, llvm::ArrayRef<int64_t> strides,
                            llvm::ArrayRef<int64_t> dilations) {
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  std::vector<int64_t> p = im.attrInts(n, "pads").value_or(std::vector<int64_t>(4, 0));
  if (p.size() != 4)
    throw im.fail(n, "pads needs 4 values for a 2-D window");
  if (autoPad == "VALID")
    p.assign(4, 0);
  else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER")
    for (int i = 0; i < 2; ++i) {
      int64_t in = x.dim(2 + i), out = (in + strides[i] - 1) / strides[i];
      int64_t total = std::max<int64_t>(0, (out - 1) * strides[i] +
                                               (kernel[i] - 1) * dilations[i] + 1 - in);
      p[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p[2 + i] = total - p[i];
    }
  else if (autoPad != "NOTSET")
    throw im.fail(n, "auto_pad '" + autoPad + "' is not supported");
  return {p[0], p[2], p[1], p[3]};
}

std::vector<int64_t> pair(Importer &im, const NodeProto &n, const char *key) {
  std::vector<int64_t> v = im.attrInts(n, key).value_or(std::vector<int64_t>{1, 1});
  if (v.size() != 2)
    throw im.fail(n, std::string(key) + " needs 2 values for a 2-D window");
  return v;
}

void conv(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0), w = im.input(n, 1), bias = im.optionalInput(n, 2);
  requireRank(im, n, x, 4);
  requireRank(im, n, w, 4);
  if (bias)
    requireRank(im, n, bias, 1);
  std::vector<int64_t> strides = pair(im, n, "strides"), dilations = pair(im, n, "dilations");
  std::vector<int64_t> kernel{w.dim(2), w.dim(3)};
  Attrs a;
  a.set("strides", ints(im, strides));
  a.set("dilations", ints(im, dilations));
  a.set("padding", ints(im, pads2d(im, n, x, kernel, strides, dilations)));
  a.set("groups", B(im).getI64IntegerAttr(im.attrInt(n, "group", 1)));
  a.set("layout", B(im).getStringAttr("NCHW"));
  if (!bias) {
    im.emit(n, "conv2d", {x, w}, a);
    return;
  }
  Tensor y = im.emit(n, "conv2d", {x, w}, a, n.output(0) + ".conv", "conv");
  Attrs shape;
  shape.set("shape", ints(im, {bias.dim(0), 1, 1}));
  Tensor b3 = im.emit(n, "reshape", {bias}, shape, n.output(0) + ".bias", "bias");
  im.emit(n, "add", {y, b3});
}

void gemm(Importer &im, const NodeProto &n) {
  Tensor a = im.input(n, 0), b = im.input(n, 1), c = im.optionalInput(n, 2);
  double alpha = im.attrFloat(n, "alpha", 1.0), beta = im.attrFloat(n, "beta", 1.0);
  Attrs t;
  t.set("transpose_a", B(im).getBoolAttr(im.attrInt(n, "transA", 0)));
  t.set("transpose_b", B(im).getBoolAttr(im.attrInt(n, "transB", 0)));
  bool last = !c && alpha == 1.0;
  Tensor y = last ? im.emit(n, "matmul", {a, b}, t)
                  : im.emit(n, "matmul", {a, b}, t, n.output(0) + ".matmul", "matmul");
  if (alpha != 1.0) {
    Attrs s;
    s.set("scale", B(im).getF64FloatAttr(alpha));
    y = c ? im.emit(n, "scale", {y}, s, n.output(0) + ".alpha", "alpha")
          : im.emit(n, "scale", {y}, s);
  }
  if (!c)
    return;
  if (beta != 1.0) {
    Attrs s;
    s.set("scale", B(im).getF64FloatAttr(beta));
    c = im.emit(n, "scale", {c}, s, n.output(0) + ".beta", "beta");
  }
  im.emit(n, "add", {y, c});
}

Mapping unary(const char *op) {
  return [op](Importer &im, const NodeProto &n) { im.emit(n, op, {im.input(n, 0)}); };
}

Mapping binary(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    if (n.input_size() != 2)
      throw im.fail(n, "takes 2 inputs, got " + std::to_string(n.input_size()));
    im.emit(n, op, {im.input(n, 0), im.input(n, 1)});
  };
}

/// Max and Min take any number of inputs: a chain of two-input ops.
Mapping variadic(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    if (n.input_size() < 1)
      throw im.fail(n, "needs an input");
    Tensor acc = im.input(n, 0);
    if (n.input_size() == 1)
      return im.alias(n, acc);
    for (int i = 1; i + 1 < n.input_size(); ++i)
      acc = im.emit(n, op, {acc, im.input(n, i)}, {},
                    n.output(0) + "." + std::to_string(i), std::to_string(i));
    im.emit(n, op, {acc, im.input(n, n.input_size() - 1)});
  };
}

void pow(Importer &im, const NodeProto &n) {
  const HostTensor *e = im.constantInput(n, 1);
  if (!e || e->data.size() != 1)
    throw im.fail(n, "only a constant scalar exponent is supported");
  Attrs a;
  a.set("exponent", B(im).getF64FloatAttr(e->data[0]));
  im.emit(n, "pow", {im.input(n, 0)}, a);
}

/// Softmax and LogSoftmax: before opset 13 they work on the input flattened
/// to 2-D at `axis`, which is the per-axis form only for the last axis.
Mapping softmax(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    Tensor x = im.input(n, 0);
    int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", im.opset < 13 ? 1 : -1), x.rank());
    Attrs a;
    if (im.opset >= 13 || axis == x.rank() - 1) {
      a.set("axis", B(im).getI64IntegerAttr(axis));
      im.emit(n, op, {x}, a);
      return;
    }
    int64_t outer = 1, inner = 1;
    for (int64_t i = 0; i < x.rank(); ++i)
      (i < axis ? outer : inner) = product({i < axis ? outer : inner, x.dim(i)});
    Attrs flat, back;
    flat.set("shape", ints(im, {outer, inner}));
    back.set("shape", ints(im, x.shape()));
    Tensor f = im.emit(n, "reshape", {x}, flat, n.output(0) + ".2d", "2d");
    a.set("axis", B(im).getI64IntegerAttr(1));
    Tensor s = im.emit(n, op, {f}, a, n.output(0) + "." + op, op);
    im.emit(n, "reshape", {s}, back);
  };
}

void batchNorm(Importer &im, const NodeProto &n) {
  if (im.attrInt(n, "training_mode", 0) != 0 || n.output_size() > 1)
    throw im.fail(n, "only inference batch normalization (one output) is supported");
  for (int i : {3, 4})
    if (i < n.input_size())
      im.statistics.insert(n.input(i));
  Tensor x = im.input(n, 0);
  requireRank(im, n, x, 4);
  Attrs a;
  a.set("epsilon", B(im).getF64FloatAttr(im.attrFloat(n, "epsilon", 1e-5)));
  a.set("momentum", B(im).getF64FloatAttr(im.attrFloat(n, "momentum", 0.9)));
  a.set("layout", B(im).getStringAttr("NCHW"));
  im.emit(n, "batch_norm",
          {x, im.input(n, 1), im.input(n, 2), im.input(n, 3), im.input(n, 4)}, a);
}

/// LayerNormalization's optional outputs, the Mean and the InvStdDev over
/// the normalised axes (kept as size-1 dims), from graph ops.
void layerNormStatistics(Importer &im, const NodeProto &n, Tensor x, int64_t axis,
                         double epsilon) {
  bool wantMean = n.output_size() > 1 && !n.output(1).empty();
  bool wantInv = n.output_size() > 2 && !n.output(2).empty();
  if (!wantMean && !wantInv)
    return;
  std::vector<int64_t> axes;
  for (int64_t i = axis; i < x.rank(); ++i)
    axes.push_back(i);
  Attrs r;
  r.set("axes", ints(im, axes));
  r.set("keepdims", B(im).getBoolAttr(true));
  std::string base = im.nodeName(n);
  Tensor mean = im.emit(n, "reduce_mean", {x}, r,
                        wantMean ? n.output(1) : base + ".mean", "mean");
  if (!wantInv)
    return;
  Tensor d = im.emit(n, "sub", {x, mean}, {}, base + ".centered", "centered");
  Tensor sq = im.emit(n, "square", {d}, {}, base + ".squared", "squared");
  Tensor var = im.emit(n, "reduce_mean", {sq}, r, base + ".variance", "variance");
  Attrs eps;
  eps.set("bias", B(im).getF64FloatAttr(epsilon));
  Tensor ve = im.emit(n, "scale", {var}, eps, base + ".variance_eps", "variance_eps");
  im.emit(n, "rsqrt", {ve}, {}, n.output(2), "inv_std");
}

void layerNorm(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0), scale = im.input(n, 1), bias = im.optionalInput(n, 2);
  int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", -1), x.rank());
  refuseAttr(im, n, "stash_type", 1);
  layerNormStatistics(im, n, x, axis, im.attrFloat(n, "epsilon", 1e-5));
  if (!bias) {
    bias = im.b.constValue(im.nodeName(n) + ".bias", scale.shape(),
                           std::vector<double>(product(scale.shape()), 0.0), scale.dtype());
  }
  Attrs a;
  a.set("epsilon", B(im).getF64FloatAttr(im.attrFloat(n, "epsilon", 1e-5)));
  a.set("axis", B(im).getI64IntegerAttr(axis));
  im.emit(n, "layer_norm", {x, scale, bias}, a, n.output(0));
}

Mapping pool(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    Tensor x = im.input(n, 0);
    requireRank(im, n, x, 4);
    refuseAttr(im, n, "ceil_mode", 0);
    refuseAttr(im, n, "storage_order", 0);
    if (n.output_size() > 1)
      throw im.fail(n, "the Indices output is not supported");
    std::vector<int64_t> kernel = im.attrInts(n, "kernel_shape").value_or(std::vector<int64_t>{});
    if (kernel.size() != 2)
      throw im.fail(n, "kernel_shape needs 2 values (2-D pooling)");
    std::vector<int64_t> strides = pair(im, n, "strides"), dilations = pair(im, n, "dilations");
    if (dilations != std::vector<int64_t>{1, 1})
      throw im.fail(n, "dilated pooling is not supported");
    std::vector<int64_t> pads = pads2d(im, n, x, kernel, strides, dilations);
    if (std::string(op) == "avg_pool2d" && im.attrInt(n, "count_include_pad", 0) &&
        pads != std::vector<int64_t>(4, 0))
      throw im.fail(n, "count_include_pad = 1 with padding is not supported");
    Attrs a;
    a.set("kernel", ints(im, kernel));
    a.set("strides", ints(im, strides));
    a.set("padding", ints(im, pads));
    a.set("layout", B(im).getStringAttr("NCHW"));
    im.emit(n, op, {x}, a);
  };
}

void globalAvgPool(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  requireRank(im, n, x, 4);
  Attrs a, shape;
  a.set("layout", B(im).getStringAttr("NCHW"));
  Tensor p = im.emit(n, "global_avg_pool", {x}, a, n.output(0) + ".2d", "pool");
  shape.set("shape", ints(im, {x.dim(0), x.dim(1), 1, 1}));
  im.emit(n, "reshape", {p}, shape);
}

void reshapeTo(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> shape) {
  Attrs a;
  a.set("shape", ints(im, shape));
  im.emit(n, "reshape", {x}, a);
}

void reshape(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, reshapeTarget(im, n, x.shape(), im.intsInput(n, 1)));
}

void flatten(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  int64_t axis = im.attrInt(n, "axis", 1);
  axis = axis == x.rank() ? axis : normalizeAxis(im, n, axis, x.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < axis ? outer : inner) = product({i < axis ? outer : inner, x.dim(i)});
  reshapeTo(im, n, x, {outer, inner});
}

void transpose(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::vector<int64_t> perm;
  for (int64_t i = x.rank() - 1; i >= 0; --i)
    perm.push_back(i);
  Attrs a;
  a.set("perm", ints(im, im.attrInts(n, "perm").value_or(perm)));
  im.emit(n, "transpose", {x}, a);
}

void concat(Importer &im, const NodeProto &n) {
  std::vector<Tensor> xs;
  for (int i = 0; i < n.input_size(); ++i)
    xs.push_back(im.input(n, i));
  if (xs.empty())
    throw im.fail(n, "needs inputs");
  Attrs a;
  a.set("axis", B(im).getI64IntegerAttr(
                    normalizeAxis(im, n, im.attrInt(n, "axis", 0), xs[0].rank())));
  im.emit(n, "concat", xs, a);
}

void slice(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  SliceRanges r = sliceRanges(im, n, x.shape());
  Attrs a;
  a.set("axes", ints(im, r.axes));
  a.set("starts", ints(im, r.starts));
  a.set("ends", ints(im, r.ends));
  im.emit(n, "slice", {x}, a);
}

/// Gather: a lookup in a 2-D table along axis 0 is an embedding; constant
/// indices select with a slice (one index) otherwise.
void gather(Importer &im, const NodeProto &n) {
  Tensor data = im.input(n, 0);
  int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), data.rank());
  const HostTensor *index = im.constantInput(n, 1);
  if (index && index->data.size() == 1) {
    int64_t i = toInt64(index->data[0]);
    int64_t dim = data.dim(axis);
    if (i < -dim || i >= dim)
      throw im.fail(n, "index " + std::to_string(i) + " is out of range");
    i = i < 0 ? i + dim : i;
    Attrs a;
    a.set("axes", ints(im, {axis}));
    a.set("starts", ints(im, {i}));
    a.set("ends", ints(im, {i + 1}));
    Tensor s = im.emit(n, "slice", {data}, a, n.output(0) + ".slice", "slice");
    std::vector<int64_t> shape = data.shape().vec();
    shape.erase(shape.begin() + axis);
    for (size_t k = 0; k < index->shape.size(); ++k)
      shape.insert(shape.begin() + axis, 1);
    reshapeTo(im, n, s, shape);
    return;
  }
  if (axis != 0 || data.rank() != 2)
    throw im.fail(n, "only a lookup in a 2-D table along axis 0 (an embedding) or one "
                     "constant index is supported");
  im.emit(n, "embedding", {im.input(n, 1), data});
}

void unsqueeze(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, unsqueezed(im, n, x.shape()));
}

void squeeze(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, squeezed(im, n, x.shape()));
}

void reduceMean(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::vector<int64_t> axes = im.opset >= 18 && n.input_size() > 1 ? im.intsInput(n, 1)
                              : im.attrInts(n, "axes").value_or(std::vector<int64_t>{});
  for (int64_t &a : axes)
    a = normalizeAxis(im, n, a, x.rank());
  refuseAttr(im, n, "noop_with_empty_axes", 0);
  Attrs a;
  a.set("axes", ints(im, axes));
  a.set("keepdims", B(im).getBoolAttr(im.attrInt(n, "keepdims", 1)));
  im.emit(n, "reduce_mean", {x}, a);
}

void cast(Importer &im, const NodeProto &n) {
  std::optional<std::string> to = dtypeOf((int)im.attrInt(n, "to", 0));
  if (!to)
    throw im.fail(n, "casts to ONNX data type " + std::to_string(im.attrInt(n, "to", 0)) +
                         " are not supported");
  Attrs a;
  a.set("to", mlir::TypeAttr::get(graph::parseDtype(&im.b.context(), *to)));
  im.emit(n, "cast", {im.input(n, 0)}, a);
}

void identity(Importer &im, const NodeProto &n) {
  // An initializer's alias (exporters write them for tied or equal values)
  // becomes a param of its own, named as the model names it.
  auto init = im.initializers.find(n.input(0));
  if (init != im.initializers.end() && !im.initializers.count(n.output(0))) {
    im.initializers[n.output(0)] = init->second;
    if (im.graphOutputs.count(n.output(0)))
      im.alias(n, im.tensor(n.output(0)));
    return;
  }
  im.alias(n, im.input(n, 0));
}

void dropout(Importer &im, const NodeProto &n) {
  if (n.output_size() > 1 && !n.output(1).empty())
    throw im.fail(n, "the mask output is not supported");
  const HostTensor *training = im.constantInput(n, 2);
  if ((n.input_size() > 2 && !n.input(2).empty() && !training) ||
      (training && !training->data.empty() && training->data[0] != 0))
    throw im.fail(n, "only inference dropout (training_mode false) is supported");
  im.alias(n, im.input(n, 0));
}

/// SoftmaxCrossEntropyLoss with the mean reduction: softmax_cross_entropy,
/// the graph's loss when it is a graph output.
void crossEntropy(Importer &im, const NodeProto &n) {
  if (im.attrString(n, "reduction", "mean") != "mean" || im.attr(n, "ignore_index") ||
      (n.input_size() > 2 && !n.input(2).empty()))
    throw im.fail(n, "only the mean reduction, without weights or ignore_index, is supported");
  im.emit(n, "softmax_cross_entropy", {im.input(n, 0), im.input(n, 1)});
  if (im.graphOutputs.count(n.output(0)))
    im.lossOutput = n.output(0);
}

/// Ops only ever folded: reaching the mapping means an input was not known.
void needsConstants(Importer &im, const NodeProto &n) {
  throw im.fail(n, "is supported only on constants known at import time");
}

} // namespace

const std::map<std::string, Mapping> &mappings() {
  static const std::map<std::string, Mapping> table = {
      {"Gemm", gemm},
      {"MatMul", binary("matmul")},
      {"Conv", conv},
      {"BatchNormalization", batchNorm},
      {"LayerNormalization", layerNorm},
      {"Relu", unary("relu")},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Erf", unary("erf")},
      {"Sqrt", unary("sqrt")},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Neg", unary("neg")},
      {"Abs", unary("abs")},
      {"Add", binary("add")},
      {"Sub", binary("sub")},
      {"Mul", binary("mul")},
      {"Div", binary("div")},
      {"Pow", pow},
      {"ReduceMean", reduceMean},
      {"Softmax", softmax("softmax")},
      {"LogSoftmax", softmax("log_softmax")},
      {"MaxPool", pool("max_pool2d")},
      {"AveragePool", pool("avg_pool2d")},
      {"GlobalAveragePool", globalAvgPool},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Transpose", transpose},
      {"Concat", concat},
      {"Slice", slice},
      {"Gather", gather},
      {"Unsqueeze", unsqueeze},
      {"Squeeze", squeeze},
      {"Cast", cast},
      {"Constant", needsConstants},
      {"Identity", identity},
      {"Dropout", dropout},
      {"SoftmaxCrossEntropyLoss", crossEntropy},
      {"Max", variadic("maximum")},
      {"Min", variadic("minimum")},
      {"Shape", needsConstants},
      {"ConstantOfShape", needsConstants},
      {"Range", needsConstants},
  };
  return table;
}

} // namespace ampc::onnx_import
