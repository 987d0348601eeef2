// ONNX Split and Where on graph values, as PyTorch exports GPT-style
// attention: the q, k, v projection split in three (slices), and the causal
// masked_fill (a Where whose condition is known at import time: the mask
// becomes a constant the scores are added to or multiplied by).
#include <cmath>

#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

/// A masked_fill of -inf (or of any value beyond f16's range) imports as
/// an add of this where the condition holds: finite in every dtype and in
/// JSON, and its exp underflows to 0 in the softmax's f32 as -inf's does.
constexpr double kMaskedOut = -30000.0;

void split(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), x.rank());
  int64_t length = x.dim(axis), parts = n.output_size();
  std::vector<int64_t> sizes;
  if (n.input_size() > 1 && !n.input(1).empty())
    sizes = im.intsInput(n, 1);
  else if (std::optional<std::vector<int64_t>> given = im.attrInts(n, "split"))
    sizes = *given;
  else { // equal parts, the last one smaller where the length does not divide
    int64_t chunk = (length + parts - 1) / std::max<int64_t>(parts, 1);
    for (int64_t at = 0; at < length; at += chunk)
      sizes.push_back(std::min(chunk, length - at));
  }
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0)
      throw im.fail(n, "a split size is negative");
    total += s;
  }
  if ((int64_t)sizes.size() != parts || total != length)
    throw im.fail(n, "splits axis " + std::to_string(axis) + " of " + std::to_string(length) +
                         " into " + std::to_string(sizes.size()) + " parts of " +
                         std::to_string(total) + " for " + std::to_string(parts) + " outputs");
  int64_t start = 0;
  for (int64_t i = 0; i < parts; ++i) {
    Attrs a;
    a.set("axes", ints(im, {axis}));
    a.set("starts", ints(im, {start}));
    a.set("ends", ints(im, {start + sizes[i]}));
    if (!n.output(i).empty())
      im.emit(n, "slice", {x}, a, n.output(i), "part" + std::to_string(i));
    start += sizes[i];
  }
}

namespace {

/// A constant named after `n`'s output and `suffix`, as a graph value.
Tensor constantFor(Importer &im, const NodeProto &n, const std::string &suffix, HostTensor t) {
  std::string name = n.output(0) + "." + suffix;
  im.known[name] = std::move(t);
  return im.tensor(name);
}

} // namespace

/// Where(cond, a, b) with cond known and one of a, b a known scalar c (the
/// other a graph value v): where cond picks c, the result is c, else v.
/// With c beyond f16's range (masked_fill's -inf): v + kMaskedOut·m.
/// Else: v · (1 - m) + c · m; m being cond (or its negation) as 0/1.
void where(Importer &im, const NodeProto &n) {
  const HostTensor *cond = im.constantInput(n, 0);
  const HostTensor *a = im.constantInput(n, 1), *b = im.constantInput(n, 2);
  if (!cond || (!a && !b) || (a && b))
    throw im.fail(n, "is supported on graph values only as a masked_fill: a condition and "
                     "one branch known at import time");
  const HostTensor *c = a ? a : b;
  if (c->data.size() != 1)
    throw im.fail(n, "is supported on graph values only with a scalar for the known branch");
  Tensor v = im.input(n, a ? 2 : 1);
  double fillValue = c->data[0];
  HostTensor mask{v.dtype(), cond->shape, {}};
  for (double x : cond->data) // 1 where the result is the fill
    mask.data.push_back((x != 0) == (a != nullptr) ? 1.0 : 0.0);
  if (!std::isfinite(fillValue) || std::fabs(fillValue) > 65504.0) {
    double big = fillValue < 0 ? kMaskedOut : -kMaskedOut;
    for (double &x : mask.data)
      x *= big;
    im.emit(n, "add", {v, constantFor(im, n, "mask", mask)});
    return;
  }
  HostTensor keep = mask, filled = mask;
  for (size_t i = 0; i < mask.data.size(); ++i) {
    keep.data[i] = 1.0 - mask.data[i];
    filled.data[i] = fillValue * mask.data[i];
  }
  Tensor kept = im.emit(n, "mul", {v, constantFor(im, n, "keep", keep)}, {},
                        n.output(0) + ".kept", "kept");
  im.emit(n, "add", {kept, constantFor(im, n, "fill", filled)});
}

} // namespace ampc::onnx_import
