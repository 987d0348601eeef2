// ONNX Resize (and the older Upsample) as graph ops (docs/onnx.md, "Ops").
//
// Resizing one axis is linear in the input: y = M x along that axis, where
// row o of M holds the weights ONNX's rules give output o (one 1 for
// nearest, two weights for linear, four for cubic). So each resized axis
// is a `matmul` with a constant M, and the gradient is the matmul's. The
// common case, nearest with an integer factor where every input repeats
// (PyTorch's nn.Upsample(scale_factor=2)), is a `reshape`, an `add` of
// zeros that broadcasts each element to its copies, and a `reshape` back:
// no arithmetic, and the gradient sums each element's copies.
#include <algorithm>
#include <cmath>

#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

/// The longest axis a resize makes, and the most weights one axis's
/// matrix may hold (a 4096 x 4096 resize): beyond, the import refuses
/// rather than allocating without bound.
constexpr int64_t kMaxLength = int64_t(1) << 24;
constexpr int64_t kMaxWeights = int64_t(1) << 24;

/// How one node resizes: the attributes, with the pre-11 forms' defaults.
struct Rule {
  std::string mode, transform, nearest;
  double cubicA;
  bool excludeOutside;
};

Rule ruleOf(Importer &im, const NodeProto &n) {
  bool old = n.op_type() == "Upsample" || im.opset < 11;
  Rule r{im.attrString(n, "mode", "nearest"),
         old ? "asymmetric" : im.attrString(n, "coordinate_transformation_mode", "half_pixel"),
         old ? "floor" : im.attrString(n, "nearest_mode", "round_prefer_floor"),
         im.attrFloat(n, "cubic_coeff_a", -0.75), im.attrInt(n, "exclude_outside", 0) != 0};
  if (r.mode != "nearest" && r.mode != "linear" && r.mode != "cubic")
    throw im.fail(n, "mode '" + r.mode + "' is not one of nearest, linear, cubic");
  if (r.transform == "tf_crop_and_resize")
    throw im.fail(n, "coordinate_transformation_mode 'tf_crop_and_resize' is not supported");
  static const char *transforms[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                     "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
  if (std::find(std::begin(transforms), std::end(transforms), r.transform) ==
      std::end(transforms))
    throw im.fail(n, "coordinate_transformation_mode '" + r.transform + "' is not supported");
  static const char *nearests[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
  if (std::find(std::begin(nearests), std::end(nearests), r.nearest) == std::end(nearests))
    throw im.fail(n, "nearest_mode '" + r.nearest + "' is not supported");
  refuseAttr(im, n, "antialias", 0);
  if (im.attrString(n, "keep_aspect_ratio_policy", "stretch") != "stretch")
    throw im.fail(n, "keep_aspect_ratio_policy other than 'stretch' is not supported");
  return r;
}

/// The input coordinate output `o` maps to, by ONNX's transform.
double source(const Rule &r, int64_t o, int64_t in, int64_t out, double scale) {
  const std::string &t = r.transform;
  if (t == "align_corners") { // the resized length before rounding down, as ONNX's reference
    double length = in * scale;
    return length <= 1 ? 0.0 : double(o) * double(in - 1) / (length - 1);
  }
  if (t == "asymmetric")
    return o / scale;
  if (t == "tf_half_pixel_for_nn")
    return (o + 0.5) / scale;
  if (t == "pytorch_half_pixel")
    return out > 1 ? (o + 0.5) / scale - 0.5 : 0.0;
  if (t == "half_pixel_symmetric") {
    double adjustment = double(out) / (scale * double(in));
    return in / 2.0 * (1 - adjustment) + (o + 0.5) / scale - 0.5;
  }
  return (o + 0.5) / scale - 0.5; // half_pixel
}

int64_t nearestIndex(const Rule &r, double x) {
  double f = std::floor(x);
  if (r.nearest == "floor")
    return (int64_t)f;
  if (r.nearest == "ceil")
    return (int64_t)std::ceil(x);
  if (x - f == 0.5)
    return (int64_t)(r.nearest == "round_prefer_floor" ? f : f + 1);
  return (int64_t)std::round(x);
}

/// The input each output copies, for nearest.
std::vector<int64_t> nearestMap(const Rule &r, int64_t in, int64_t out, double scale) {
  std::vector<int64_t> map(out);
  for (int64_t o = 0; o < out; ++o)
    map[o] = std::clamp<int64_t>(nearestIndex(r, source(r, o, in, out, scale)), 0, in - 1);
  return map;
}

/// The factor by which every input repeats when nearest's map is
/// o -> o / factor; 0 when it is not.
int64_t repeatFactor(const std::vector<int64_t> &map, int64_t in) {
  int64_t out = map.size();
  if (out % in)
    return 0;
  int64_t f = out / in;
  for (int64_t o = 0; o < out; ++o)
    if (map[o] != o / f)
      return 0;
  return f;
}

/// Row o's weights over the input, [out, in] row-major.
std::vector<double> weights(const Rule &r, int64_t in, int64_t out, double scale) {
  std::vector<double> m(out * in, 0.0);
  if (r.mode == "nearest") {
    std::vector<int64_t> map = nearestMap(r, in, out, scale);
    for (int64_t o = 0; o < out; ++o)
      m[o * in + map[o]] = 1;
    return m;
  }
  auto clamped = [in](int64_t i) { return std::clamp<int64_t>(i, 0, in - 1); };
  for (int64_t o = 0; o < out; ++o) {
    double x = source(r, o, in, out, scale);
    double *row = &m[o * in];
    int64_t x0 = (int64_t)std::floor(x);
    double t = x - x0, a = r.cubicA;
    std::vector<std::pair<int64_t, double>> taps;
    if (r.mode == "linear")
      taps = {{x0, 1 - t}, {x0 + 1, t}};
    else
      taps = {{x0 - 1, ((a * (t + 1) - 5 * a) * (t + 1) + 8 * a) * (t + 1) - 4 * a},
              {x0, ((a + 2) * t - (a + 3)) * t * t + 1},
              {x0 + 1, ((a + 2) * (1 - t) - (a + 3)) * (1 - t) * (1 - t) + 1},
              {x0 + 2, ((a * (2 - t) - 5 * a) * (2 - t) + 8 * a) * (2 - t) - 4 * a}};
    double kept = 0;
    for (auto [i, w] : taps)
      if (!r.excludeOutside || (i >= 0 && i < in))
        kept += w;
    for (auto [i, w] : taps)
      if (!r.excludeOutside || (i >= 0 && i < in))
        row[clamped(i)] += r.excludeOutside ? w / kept : w;
  }
  return m;
}

/// Output sizes and the scales the transforms use, from `scales` or `sizes`
/// (known at import), on all axes or those of opset 18's `axes`.
void targetOf(Importer &im, const NodeProto &n, Tensor x, std::vector<int64_t> &out,
              std::vector<double> &scale) {
  int64_t rank = x.rank();
  std::vector<int64_t> axes;
  for (int64_t d : im.attrInts(n, "axes").value_or(std::vector<int64_t>{}))
    axes.push_back(normalizeAxis(im, n, d, rank));
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  out = x.shape().vec();
  scale.assign(rank, 1.0);
  bool upsample = n.op_type() == "Upsample" || im.opset < 11;
  int scalesAt = upsample ? 1 : 2, sizesAt = 3;
  const HostTensor *scales = nullptr, *sizes = nullptr;
  HostTensor attrScales; // Upsample before opset 9: an attribute
  if (n.op_type() == "Upsample" && im.opset < 9) {
    if (const onnx::AttributeProto *a = im.attr(n, "scales"))
      attrScales.data.assign(a->floats().begin(), a->floats().end());
    scales = &attrScales;
  } else if (n.input_size() > scalesAt && !n.input(scalesAt).empty()) {
    scales = im.constantInput(n, scalesAt);
    if (!scales)
      throw im.fail(n, "its scales must be known at import time");
  }
  if (!upsample && n.input_size() > sizesAt && !n.input(sizesAt).empty()) {
    sizes = im.constantInput(n, sizesAt);
    if (!sizes)
      throw im.fail(n, "its sizes must be known at import time");
  }
  if (scales && scales->data.empty())
    scales = nullptr;
  if (sizes && sizes->data.empty())
    sizes = nullptr;
  if (!scales == !sizes)
    throw im.fail(n, "needs either scales or sizes (one of the two, not empty)");
  const HostTensor &given = scales ? *scales : *sizes;
  if (given.data.size() != axes.size())
    throw im.fail(n, std::string(scales ? "scales" : "sizes") + " has " +
                         std::to_string(given.data.size()) + " values for " +
                         std::to_string(axes.size()) + " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t d = axes[i];
    double v = given.data[i];
    if (!(v > 0) || !std::isfinite(v))
      throw im.fail(n, std::string(scales ? "a scale" : "a size") + " is not a positive number");
    double length = scales ? std::floor(x.dim(d) * v) : v;
    if (length > double(kMaxLength))
      throw im.fail(n, "axis " + std::to_string(d) + " would have more than " +
                           std::to_string(kMaxLength) + " elements, the most ampc resizes to");
    out[d] = (int64_t)length;
    scale[d] = scales ? v : double(out[d]) / double(x.dim(d));
    if (out[d] < 1)
      throw im.fail(n, "axis " + std::to_string(d) + " would have no elements");
  }
}

} // namespace

void resize(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  Rule rule = ruleOf(im, n);
  std::vector<int64_t> out;
  std::vector<double> scale;
  targetOf(im, n, x, out, scale);
  int64_t rank = x.rank();
  std::vector<int64_t> resized;
  std::vector<std::vector<double>> matrices(rank);
  bool repeats = true;
  std::vector<int64_t> factor(rank, 1);
  for (int64_t d = 0; d < rank; ++d) {
    if (out[d] == x.dim(d) && scale[d] == 1.0)
      continue;
    resized.push_back(d);
    factor[d] = rule.mode == "nearest"
                    ? repeatFactor(nearestMap(rule, x.dim(d), out[d], scale[d]), x.dim(d))
                    : 0;
    repeats = repeats && factor[d] > 0;
  }
  if (!repeats)
    for (int64_t d : resized) {
      if (product({out[d], x.dim(d)}) > kMaxWeights)
        throw im.fail(n, "resizing axis " + std::to_string(d) + " from " +
                             std::to_string(x.dim(d)) + " to " + std::to_string(out[d]) +
                             " takes a matrix of more than " + std::to_string(kMaxWeights) +
                             " weights, more than ampc imports");
      matrices[d] = weights(rule, x.dim(d), out[d], scale[d]);
    }
  const std::string &name = n.output(0);
  if (resized.empty())
    return im.alias(n, x);
  if (repeats) {
    std::vector<int64_t> split, copies;
    for (int64_t d = 0; d < rank; ++d) {
      split.push_back(x.dim(d));
      copies.push_back(x.dim(d));
      if (factor[d] > 1) {
        split.push_back(1);
        copies.push_back(factor[d]);
      }
    }
    return broadcastCopies(im, n, x, split, copies, out);
  }
  for (int64_t d : resized) {
    std::string axis = "axis" + std::to_string(d);
    bool last = d == resized.back();
    Tensor m = im.b.constValue(im.nodeName(n) + "." + axis + "_weights", {out[d], x.dim(d)},
                               matrices[d], x.dtype());
    Attrs t;
    if (d == rank - 1) { // [..., in] x M^T
      t.set("transpose_b", B(im).getBoolAttr(true));
      x = im.emit(n, "matmul", {x, m}, t, last ? name : name + "." + axis, axis);
      continue;
    }
    if (d == rank - 2) { // M x [..., in, w]
      x = im.emit(n, "matmul", {m, x}, {}, last ? name : name + "." + axis, axis);
      continue;
    }
    std::vector<int64_t> perm;
    for (int64_t i = 0; i < rank; ++i)
      if (i != d)
        perm.push_back(i);
    perm.push_back(d);
    std::vector<int64_t> inverse(rank);
    for (int64_t i = 0; i < rank; ++i)
      inverse[perm[i]] = i;
    Attrs p, q;
    p.set("perm", ints(im, perm));
    q.set("perm", ints(im, inverse));
    t.set("transpose_b", B(im).getBoolAttr(true));
    Tensor moved = im.emit(n, "transpose", {x}, p, name + "." + axis + "_last", axis + "_last");
    Tensor y = im.emit(n, "matmul", {moved, m}, t, name + "." + axis + "_resized",
                       axis + "_resized");
    x = im.emit(n, "transpose", {y}, q, last ? name : name + "." + axis, axis);
  }
}

} // namespace ampc::onnx_import
