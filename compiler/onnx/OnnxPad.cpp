// ONNX Pad as graph ops: concats of filled blocks (no pad op in the graph
// dialect: a concat's gradient is slices), a slice for a negative pad. Also
// used by AveragePool counting its padding and by strided Slice.
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

Tensor padded(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> begins,
              llvm::ArrayRef<int64_t> ends, double value, const std::string &out) {
  int64_t last = -1;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (begins[d] || ends[d])
      last = d;
  for (int64_t d = 0; d <= last; ++d) {
    if (!begins[d] && !ends[d])
      continue;
    std::string axis = "axis" + std::to_string(d);
    bool grows = begins[d] > 0 || ends[d] > 0;
    if (begins[d] < 0 || ends[d] < 0) { // Negative pads remove elements.
      int64_t lo = std::max<int64_t>(0, -begins[d]);
      int64_t hi = x.dim(d) - std::max<int64_t>(0, -ends[d]);
      if (hi <= lo)
        throw im.fail(n, "negative pads remove all of axis " + std::to_string(d));
      Attrs a;
      a.set("axes", ints(im, {d}));
      a.set("starts", ints(im, {lo}));
      a.set("ends", ints(im, {hi}));
      x = im.emit(n, "slice", {x}, a,
                  d == last && !grows ? out : n.output(0) + "." + axis + "_cropped",
                  axis + "_crop");
    }
    if (!grows)
      continue;
    std::vector<Tensor> parts;
    for (int64_t side : {0, 1}) {
      int64_t count = side ? ends[d] : begins[d];
      if (side)
        parts.push_back(x);
      if (count <= 0)
        continue;
      std::vector<int64_t> shape = x.shape().vec();
      shape[d] = count;
      parts.push_back(im.fill(n, shape, value, x, axis + (side ? "_after" : "_before")));
    }
    Attrs a;
    a.set("axis", B(im).getI64IntegerAttr(d));
    x = im.emit(n, "concat", parts, a, d == last ? out : n.output(0) + "." + axis + "_padded",
                axis);
  }
  return x;
}

/// Pad in constant mode: concats of filled blocks (negative pads slice).
void pad(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::string mode = im.attrString(n, "mode", "constant");
  if (mode != "constant")
    throw im.fail(n, "mode '" + mode + "' is not supported (only 'constant')");
  std::vector<int64_t> pads = im.opset < 11 ? im.attrInts(n, "pads").value_or(
                                                  std::vector<int64_t>{})
                                            : im.intsInput(n, 1);
  double value = im.attrFloat(n, "value", 0.0);
  if (im.opset >= 11 && n.input_size() > 2 && !n.input(2).empty()) {
    const HostTensor *v = im.constantInput(n, 2);
    if (!v || v->data.size() != 1)
      throw im.fail(n, "only a constant scalar pad value is supported");
    value = v->data[0];
  }
  std::vector<int64_t> axes;
  if (n.input_size() > 3 && !n.input(3).empty())
    for (int64_t a : im.intsInput(n, 3))
      axes.push_back(normalizeAxis(im, n, a, x.rank()));
  else
    for (int64_t d = 0; d < x.rank(); ++d)
      axes.push_back(d);
  if (pads.size() != 2 * axes.size())
    throw im.fail(n, "pads needs " + std::to_string(2 * axes.size()) + " values, got " +
                         std::to_string(pads.size()));
  std::vector<int64_t> begins(x.rank(), 0), ends(x.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    begins[axes[i]] = pads[i];
    ends[axes[i]] = pads[axes.size() + i];
  }
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; }))
    return im.alias(n, x);
  padded(im, n, x, begins, ends, value, n.output(0));
}

} // namespace ampc::onnx_import
