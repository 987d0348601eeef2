// ONNX's neural-network ops as graph ops: Gemm, Conv, the normalisations,
// pooling and Softmax (docs/onnx.md lists what each supports). The other
// mappings and the table are OnnxOps.cpp.
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

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
static std::vector<int64_t> pads2d(Importer &im, const NodeProto &n, Tensor x,
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

static std::vector<int64_t> pair(Importer &im, const NodeProto &n, const char *key) {
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
  std::vector<int64_t> pads = pads2d(im, n, x, kernel, strides, dilations); // [t, b, l, r]
  // cuDNN pads both sides of an axis alike: the wider side's excess (SAME
  // padding of an even window, as TensorFlow exports it) becomes zeros
  // concatenated to the input, so the import runs on every backend.
  if (pads[0] != pads[1] || pads[2] != pads[3]) {
    int64_t h = std::min(pads[0], pads[1]), v = std::min(pads[2], pads[3]);
    x = padded(im, n, x, {0, 0, pads[0] - h, pads[2] - v}, {0, 0, pads[1] - h, pads[3] - v}, 0.0,
               n.output(0) + ".padded");
    pads = {h, h, v, v};
  }
  Attrs a;
  a.set("strides", ints(im, strides));
  a.set("dilations", ints(im, dilations));
  a.set("padding", ints(im, pads));
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
  // A training-mode export (PyTorch's TrainingMode.TRAINING) also returns the
  // moved running statistics. batch_norm moves them itself, as the module
  // does (docs/onnx.md): it imports when nothing else reads them.
  for (int i = 1; i < n.output_size(); ++i)
    if (!n.output(i).empty() && (im.read.count(n.output(i)) || im.graphOutputs.count(n.output(i))))
      throw im.fail(n, "its output '" + n.output(i) + "' (" +
                           (i == 1   ? "the moved running mean"
                            : i == 2 ? "the moved running variance"
                                     : "a saved batch statistic") +
                           ") is read: batch_norm moves its statistics itself and has no such output");
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
          {x, im.input(n, 1), im.input(n, 2), im.input(n, 3), im.input(n, 4)}, a, n.output(0));
}

/// LayerNormalization's optional outputs, the Mean and the InvStdDev over
/// the normalised axes (kept as size-1 dims), from graph ops.
static void layerNormStatistics(Importer &im, const NodeProto &n, Tensor x, int64_t axis,
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

/// True when input `i` of `n` is a known constant whose every element is
/// `v`; never for a float initializer, which is a param that trains from
/// whatever values it starts at (InstanceNorm3d's affine starts at ones).
static bool allEqual(Importer &im, const NodeProto &n, int i, double v) {
  if (n.input_size() > i && im.initializers.count(n.input(i)))
    return false;
  const HostTensor *t = im.constantInput(n, i);
  if (!t)
    return false;
  for (double d : t->data)
    if (d != v)
      return false;
  return true;
}

/// InstanceNormalization: `layer_norm` over the spatial axes (2 on) with a
/// unit scale and zero bias, then the per-channel scale and bias, left out
/// where they are constant ones and zeros (PyTorch exports GroupNorm so:
/// a reshape to [N, groups, rest], this with constant ones and zeros, and
/// the affine as a Mul and an Add).
void instanceNorm(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  if (x.rank() < 3)
    throw im.fail(n, "needs an input of rank 3 or more ([N, C, spatial...]), got rank " +
                         std::to_string(x.rank()));
  for (int i : {1, 2})
    if (im.input(n, i).rank() != 1 || im.input(n, i).dim(0) != x.dim(1))
      throw im.fail(n, std::string(i == 1 ? "the scale" : "the bias") +
                           " needs one value per channel (" + std::to_string(x.dim(1)) + ")");
  std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  Attrs a;
  a.set("epsilon", B(im).getF64FloatAttr(im.attrFloat(n, "epsilon", 1e-5)));
  a.set("axis", B(im).getI64IntegerAttr(2));
  bool affine = !allEqual(im, n, 1, 1.0) || !allEqual(im, n, 2, 0.0);
  const std::string &out = n.output(0);
  Tensor y = im.emit(n, "layer_norm",
                     {x, im.fill(n, spatial, 1.0, x, "unit"), im.fill(n, spatial, 0.0, x, "zero")},
                     a, affine ? out + ".normalized" : out, "normalized");
  if (!affine)
    return;
  std::vector<int64_t> perChannel(x.rank() - 1, 1);
  perChannel[0] = x.dim(1);
  Attrs shape;
  shape.set("shape", ints(im, perChannel));
  Tensor scale = im.emit(n, "reshape", {im.input(n, 1)}, shape, out + ".scale", "scale");
  Tensor bias = im.emit(n, "reshape", {im.input(n, 2)}, shape, out + ".bias", "bias");
  y = im.emit(n, "mul", {y, scale}, {}, out + ".scaled", "scaled");
  im.emit(n, "add", {y, bias});
}

/// ceil_mode: the windows that a rounded-up output adds, as extra padding
/// after each spatial axis (PyTorch's rule: a window that would start in the
/// padding after the input is dropped). `pads` is [top, bottom, left, right].
static std::vector<int64_t> ceilPads(Importer &im, const NodeProto &n, Tensor x,
                                     llvm::ArrayRef<int64_t> kernel,
                                     llvm::ArrayRef<int64_t> strides,
                                     std::vector<int64_t> pads) {
  for (int i = 0; i < 2; ++i) {
    int64_t in = x.dim(2 + i), begin = pads[2 * i], end = pads[2 * i + 1];
    int64_t span = in + begin + end - kernel[i];
    if (span < 0)
      throw im.fail(n, "the window is larger than the padded input");
    int64_t out = (span + strides[i] - 1) / strides[i] + 1;
    if ((out - 1) * strides[i] >= in + begin)
      --out;
    pads[2 * i + 1] += std::max<int64_t>(0, (out - 1) * strides[i] + kernel[i] - (in + begin + end));
  }
  return pads;
}

Mapping pool(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    Tensor x = im.input(n, 0);
    requireRank(im, n, x, 4);
    refuseAttr(im, n, "storage_order", 0);
    if (n.output_size() > 1)
      throw im.fail(n, "the Indices output is not supported");
    std::vector<int64_t> kernel = im.attrInts(n, "kernel_shape").value_or(std::vector<int64_t>{});
    if (kernel.size() != 2)
      throw im.fail(n, "kernel_shape needs 2 values (2-D pooling)");
    std::vector<int64_t> strides = pair(im, n, "strides"), dilations = pair(im, n, "dilations");
    if (dilations != std::vector<int64_t>{1, 1})
      throw im.fail(n, "dilated pooling is not supported");
    for (int i = 0; i < 2; ++i)
      if (kernel[i] < 1 || strides[i] < 1)
        throw im.fail(n, "kernel_shape and strides must be positive");
    std::vector<int64_t> pads = pads2d(im, n, x, kernel, strides, dilations);
    bool average = std::string(op) == "avg_pool2d";
    if (im.attrInt(n, "ceil_mode", 0)) {
      std::vector<int64_t> ceil = ceilPads(im, n, x, kernel, strides, pads);
      // An average's divisor at a rounded-up edge has no graph counterpart.
      if (average && ceil != pads)
        throw im.fail(n, "ceil_mode = 1 adds windows here, which average pooling does not support");
      pads = ceil;
    }
    if (average && im.attrInt(n, "count_include_pad", 0) && pads != std::vector<int64_t>(4, 0)) {
      // Padding counted in the average: pad with zeros first, pool unpadded.
      x = padded(im, n, x, {0, 0, pads[0], pads[2]}, {0, 0, pads[1], pads[3]}, 0.0,
                 n.output(0) + ".padded");
      pads.assign(4, 0);
    }
    Attrs a;
    a.set("kernel", ints(im, kernel));
    a.set("strides", ints(im, strides));
    a.set("padding", ints(im, pads));
    a.set("layout", B(im).getStringAttr("NCHW"));
    im.emit(n, op, {x}, a);
  };
}

/// min(max(x, lo), hi) with either bound absent (NaN); a lower bound of 0 is
/// a relu. Clip, HardSigmoid and HardSwish are built from it.
static Tensor clamp(Importer &im, const NodeProto &n, Tensor x, double lo, double hi,
                    const std::string &out, const std::string &part) {
  bool hasHi = !std::isnan(hi);
  std::string mid = hasHi ? n.output(0) + "." + part + "_low" : out;
  if (lo == 0)
    x = im.emit(n, "relu", {x}, {}, mid, part + "_low");
  else if (!std::isnan(lo))
    x = im.emit(n, "maximum", {x, im.fill(n, {}, lo, x, part + "_lo")}, {}, mid, part + "_low");
  if (hasHi)
    x = im.emit(n, "minimum", {x, im.fill(n, {}, hi, x, part + "_hi")}, {}, out, part + "_high");
  return x;
}

/// Clip with constant bounds (ReLU6 is Clip(0, 6)).
void clip(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  double lo = NAN, hi = NAN;
  if (im.opset < 11) {
    lo = im.attrFloat(n, "min", NAN);
    hi = im.attrFloat(n, "max", NAN);
  }
  for (int i : {1, 2}) {
    if (n.input_size() <= i || n.input(i).empty())
      continue;
    const HostTensor *t = im.constantInput(n, i);
    if (!t || t->data.size() != 1)
      throw im.fail(n, "only constant scalar bounds are supported");
    (i == 1 ? lo : hi) = t->data[0];
  }
  if (std::isnan(lo) && std::isnan(hi))
    return im.alias(n, x);
  clamp(im, n, x, lo, hi, n.output(0), "clip");
}

/// HardSigmoid: clamp(alpha x + beta, 0, 1); HardSwish: x times that with
/// alpha 1/6, beta 1/2 (PyTorch's x * relu6(x + 3) / 6).
static Tensor hardSigmoid(Importer &im, const NodeProto &n, Tensor x, double alpha,
                          double beta, const std::string &out) {
  Attrs a;
  a.set("scale", B(im).getF64FloatAttr(alpha));
  a.set("bias", B(im).getF64FloatAttr(beta));
  Tensor affine = im.emit(n, "scale", {x}, a, n.output(0) + ".affine", "affine");
  return clamp(im, n, affine, 0.0, 1.0, out, "gate");
}

void hardSigmoidOp(Importer &im, const NodeProto &n) {
  hardSigmoid(im, n, im.input(n, 0), im.attrFloat(n, "alpha", 0.2), im.attrFloat(n, "beta", 0.5),
              n.output(0));
}

void hardSwish(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  Tensor gate = hardSigmoid(im, n, x, 1.0 / 6.0, 0.5, n.output(0) + ".gate");
  im.emit(n, "mul", {x, gate});
}

/// GlobalMaxPool: a max_pool2d whose window is the whole image.
void globalMaxPool(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  requireRank(im, n, x, 4);
  Attrs a;
  a.set("kernel", ints(im, {x.dim(2), x.dim(3)}));
  a.set("strides", ints(im, {1, 1}));
  a.set("padding", ints(im, {0, 0, 0, 0}));
  a.set("layout", B(im).getStringAttr("NCHW"));
  im.emit(n, "max_pool2d", {x}, a);
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


} // namespace ampc::onnx_import
