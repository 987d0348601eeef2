// ONNX ConvTranspose as graph ops (docs/onnx.md, "Ops").
//
// Where each window is a whole number of strides (k = K s, undilated), the
// output phases are convolutions of their own (phaseConvolutions below):
// the transposed convolution's FLOPs, no zeros. Otherwise, a transposed
// convolution with stride s, padding p and kernel k is the convolution,
// with stride 1, of the input with s - 1 zeros between neighbours and
// k_eff - 1 - p more at each border (k_eff = (k - 1) d + 1 with dilation
// d), by the filter flipped in both spatial axes with its input and output
// channels exchanged (within each group). So:
//   x [N, C, H, W] -> reshape [N, C, H, 1, W, 1] -> concat zeros to
//   [N, C, H, s, W, s] -> reshape [N, C, H s, W s]   (zeros inserted)
//   w [C, O/g, kh, kw] -> [g, C/g, O/g, kh, kw] -> transpose -> [O, C/g, kh, kw]
//   -> slices concatenated last first on each spatial axis  (flipped)
//   conv2d(x, w, padding = borders, dilations = d, groups = g) + bias
// where a border wider on one side than the other is evened out by zeros
// concatenated to the input (the GPU's convolutions pad symmetrically).
// Every piece has a gradient, so both forms train; the second multiplies
// s·s times the products a transposed convolution needs (the zeros).
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

/// The largest stride, dilation or pad imported: the zero-inserted input
/// is the input's size times the stride.
constexpr int64_t kMaxFactor = 1 << 12;

} // namespace

Tensor zerosBetween(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> s) {
  if (llvm::all_of(s, [](int64_t v) { return v == 1; }))
    return x;
  static const char *const axes2d[] = {"h", "w"}, *const axes3d[] = {"d", "h", "w"};
  const char *const *names = s.size() == 3 ? axes3d : axes2d;
  std::vector<int64_t> cells{x.dim(0), x.dim(1)}, result{x.dim(0), x.dim(1)};
  for (size_t i = 0; i < s.size(); ++i) {
    cells.insert(cells.end(), {x.dim(2 + i), 1});
    result.push_back(x.dim(2 + i) * s[i]);
  }
  x = reshaped(im, n, x, cells, "cells");
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == 1)
      continue;
    int64_t axis = 3 + 2 * i;
    std::vector<int64_t> zeros = x.shape().vec();
    zeros[axis] = s[i] - 1;
    std::string suffix = std::string("strided_") + names[i];
    Attrs a;
    a.set("axis", B(im).getI64IntegerAttr(axis));
    x = im.emit(n, "concat", {x, im.fill(n, zeros, 0.0, x, suffix + "_zeros")}, a,
                n.output(0) + "." + suffix, suffix);
  }
  return reshaped(im, n, x, result, "strided");
}

/// `w` reversed along `axis`: its slices concatenated last first.
Tensor flipped(Importer &im, const NodeProto &n, Tensor w, int64_t axis,
               const std::string &name) {
  int64_t k = w.dim(axis);
  if (k == 1)
    return w;
  std::vector<Tensor> slices;
  for (int64_t i = k - 1; i >= 0; --i) {
    Attrs a;
    a.set("axes", ints(im, {axis}));
    a.set("starts", ints(im, {i}));
    a.set("ends", ints(im, {i + 1}));
    std::string part = name + "_" + std::to_string(i);
    slices.push_back(im.emit(n, "slice", {w}, a, n.output(0) + "." + part, part));
  }
  Attrs a;
  a.set("axis", B(im).getI64IntegerAttr(axis));
  return im.emit(n, "concat", slices, a, n.output(0) + "." + name, name);
}

namespace {

std::vector<int64_t> pairOf(Importer &im, const NodeProto &n, const char *key, int64_t fallback) {
  std::vector<int64_t> v =
      im.attrInts(n, key).value_or(std::vector<int64_t>{fallback, fallback});
  if (v.size() != 2)
    throw im.fail(n, std::string(key) + " needs 2 values for a 2-D convolution");
  return v;
}

/// The transposed convolution as one convolution per output phase, where
/// each window is a whole number of strides (k = K s) and undilated: output
/// s m + r takes the taps r, r + s, ... of the filter, so phase r is a
/// stride-1 convolution of the input (padded K - 1) by those taps reversed.
/// The s_h s_w phases are one conv2d's output channels, interleaved into
/// the image as DepthToSpace interleaves them, then cropped by the pads:
/// the FLOPs of the transposed convolution itself, no zeros.
Tensor phaseConvolutions(Importer &im, const NodeProto &n, Tensor x, Tensor w, int64_t groups,
                         llvm::ArrayRef<int64_t> s, llvm::ArrayRef<int64_t> pads,
                         llvm::ArrayRef<int64_t> extra, const std::string &out) {
  int64_t N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3), Og = w.dim(1);
  int64_t Kh = w.dim(2) / s[0], Kw = w.dim(3) / s[1];
  // [C, Og, Kh s_h, Kw s_w] -> [g, C/g, Og, Kh, s_h, Kw, s_w], taps reversed
  // -> [g, s_h, s_w, Og, C/g, Kh, Kw] -> [g s_h s_w Og, C/g, Kh, Kw]
  Tensor f = reshaped(im, n, w, {groups, C / groups, Og, Kh, s[0], Kw, s[1]}, "filter_taps");
  f = flipped(im, n, flipped(im, n, f, 3, "flip_h"), 5, "flip_w");
  Attrs t;
  t.set("perm", ints(im, {0, 4, 6, 2, 1, 3, 5}));
  f = im.emit(n, "transpose", {f}, t, n.output(0) + ".filter_phases", "filter_phases");
  f = reshaped(im, n, f, {groups * s[0] * s[1] * Og, C / groups, Kh, Kw}, "filter");
  Attrs a;
  a.set("strides", ints(im, {1, 1}));
  a.set("dilations", ints(im, {1, 1}));
  a.set("padding", ints(im, {Kh - 1, Kh - 1, Kw - 1, Kw - 1}));
  a.set("groups", B(im).getI64IntegerAttr(groups));
  a.set("layout", B(im).getStringAttr("NCHW"));
  Tensor y = im.emit(n, "conv2d", {x, f}, a, n.output(0) + ".phases", "phases");
  int64_t Hp = H + Kh - 1, Wp = W + Kw - 1;
  y = reshaped(im, n, y, {N, groups, s[0], s[1], Og, Hp, Wp}, "phase_blocks");
  Attrs p;
  p.set("perm", ints(im, {0, 1, 4, 5, 2, 6, 3}));
  y = im.emit(n, "transpose", {y}, p, n.output(0) + ".interleaved", "interleaved");
  y = reshaped(im, n, y, {N, groups * Og, Hp * s[0], Wp * s[1]}, "full");
  // The full output is s (in - 1) + k long; the pads crop it, and
  // output_padding beyond it adds rows no input reaches (zeros).
  return padded(im, n, y, {0, 0, -pads[0], -pads[1]},
                {0, 0, extra[0] - pads[2], extra[1] - pads[3]}, 0.0, out);
}

} // namespace

void convTranspose(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0), w = im.input(n, 1), bias = im.optionalInput(n, 2);
  requireRank(im, n, x, 4);
  requireRank(im, n, w, 4);
  int64_t groups = im.attrInt(n, "group", 1);
  int64_t C = x.dim(1);
  if (groups < 1 || C % groups || w.dim(0) != C)
    throw im.fail(n, "the filter's " + std::to_string(w.dim(0)) + " input channels (in " +
                         std::to_string(groups) + " groups) do not fit the input's " +
                         std::to_string(C));
  if (im.attr(n, "output_shape"))
    throw im.fail(n, "output_shape is not supported: give pads and output_padding instead");
  std::vector<int64_t> s = pairOf(im, n, "strides", 1), d = pairOf(im, n, "dilations", 1),
                       extra = pairOf(im, n, "output_padding", 0);
  std::vector<int64_t> pads = im.attrInts(n, "pads").value_or(std::vector<int64_t>(4, 0));
  if (pads.size() != 4)
    throw im.fail(n, "pads needs 4 values for a 2-D convolution");
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  std::vector<int64_t> k{w.dim(2), w.dim(3)}, span(2), begin(2), end(2);
  for (int i = 0; i < 2; ++i) {
    if (s[i] < 1 || d[i] < 1 || extra[i] < 0 || (extra[i] >= s[i] && extra[i] >= d[i]))
      throw im.fail(n, "strides and dilations must be positive, output_padding below one of "
                       "them");
    if (s[i] > kMaxFactor || d[i] > kMaxFactor || std::abs(pads[i]) > kMaxFactor ||
        std::abs(pads[2 + i]) > kMaxFactor)
      throw im.fail(n, "a stride, dilation or pad above " + std::to_string(kMaxFactor) +
                           " is not supported");
    span[i] = (k[i] - 1) * d[i] + 1;
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, extra[i] + span[i] - s[i]);
      pads[i] = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[2 + i] = total - pads[i];
    } else if (autoPad == "VALID") {
      pads[i] = pads[2 + i] = 0;
    } else if (autoPad != "NOTSET") {
      throw im.fail(n, "auto_pad '" + autoPad + "' is not supported");
    }
    // Borders of the zero-inserted input, whose last s - 1 zeros count
    // toward the end border.
    begin[i] = span[i] - 1 - pads[i];
    end[i] = span[i] - 1 - pads[2 + i] + extra[i] - (s[i] - 1);
    if (x.dim(2 + i) * s[i] + begin[i] + end[i] < span[i])
      throw im.fail(n, "the padding leaves no output");
  }
  bool phases = (s[0] > 1 || s[1] > 1) && d[0] == 1 && d[1] == 1 && k[0] % s[0] == 0 &&
                k[1] % s[1] == 0;
  if (phases) {
    if (!bias) {
      phaseConvolutions(im, n, x, w, groups, s, pads, extra, n.output(0));
      return;
    }
    requireRank(im, n, bias, 1);
    Tensor y = phaseConvolutions(im, n, x, w, groups, s, pads, extra, n.output(0) + ".cropped");
    im.emit(n, "add", {y, reshaped(im, n, bias, {bias.dim(0), 1, 1}, "bias")});
    return;
  }
  // The convolution pads both sides of an axis alike (cuDNN's rule);
  // the rest of a border is added as zeros, or cropped where negative.
  std::vector<int64_t> both(2), before{0, 0, 0, 0}, after{0, 0, 0, 0};
  for (int i = 0; i < 2; ++i) {
    both[i] = std::max<int64_t>(0, std::min(begin[i], end[i]));
    before[2 + i] = begin[i] - both[i];
    after[2 + i] = end[i] - both[i];
  }
  Tensor z = padded(im, n, zerosBetween(im, n, x, s), before, after, 0.0,
                    n.output(0) + ".bordered");
  int64_t O = w.dim(1) * groups;
  Tensor f = reshaped(im, n, w, {groups, C / groups, w.dim(1), k[0], k[1]}, "filter_groups");
  Attrs t;
  t.set("perm", ints(im, {0, 2, 1, 3, 4}));
  f = im.emit(n, "transpose", {f}, t, n.output(0) + ".filter_swapped", "filter_swapped");
  f = reshaped(im, n, f, {O, C / groups, k[0], k[1]}, "filter");
  f = flipped(im, n, flipped(im, n, f, 2, "flip_h"), 3, "flip_w");
  Attrs a;
  a.set("strides", ints(im, {1, 1}));
  a.set("dilations", ints(im, d));
  a.set("padding", ints(im, {both[0], both[0], both[1], both[1]}));
  a.set("groups", B(im).getI64IntegerAttr(groups));
  a.set("layout", B(im).getStringAttr("NCHW"));
  if (!bias) {
    im.emit(n, "conv2d", {z, f}, a);
    return;
  }
  requireRank(im, n, bias, 1);
  Tensor y = im.emit(n, "conv2d", {z, f}, a, n.output(0) + ".conv", "conv");
  im.emit(n, "add", {y, reshaped(im, n, bias, {bias.dim(0), 1, 1}, "bias")});
}

} // namespace ampc::onnx_import
