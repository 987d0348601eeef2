// ONNX's 3-D convolution and pools (PyTorch's Conv3d, MaxPool3d, AvgPool3d
// over [N, C, D, H, W]) as the 2-D ops, so that they run on every backend
// with the 2-D kernels and train with their gradients (docs/onnx.md,
// "Volumes"):
// - a convolution gathers its depth taps into channels: the input, depth
//   first ([N, D, C, H, W]) and padded in depth, is sliced once per tap
//   (tap t reads depths t·dilation + j·stride), the slices stacked as
//   [N, D', C, kd, H, W] = [N·D', C·kd, H, W]; the filter [O, C/g, kd, kh, kw]
//   is [O, C/g·kd, kh, kw] as it lies (channel c·kd + t on both sides, so
//   groups stay whole), and one conv2d over H and W does the rest. The
//   input is copied kd times (im2col in depth only); the FLOPs are the
//   3-D convolution's own. Its result stays depth first through the batch
//   norms, ReLUs, residual adds and concats after it (keptDepthFirst), so that
//   between two convolutions nothing is transposed: the transposes back
//   to [N, C, D, H, W] are erased where nothing else reads them.
// - a pool's box is the product of a depth window and an H x W window, and
//   so are its maximum, its padding and its average's divisor (counting
//   padding or not): a 2-D pool over the planes [N, C·D, H, W], then one
//   over depth columns [N·C, 1, D, H'·W'] with a kd x 1 window.
// - a transposed convolution whose window is its stride (nnU-Net's and the
//   3-D U-Net's ConvTranspose3d(k, stride=k)) paints one k³ block per
//   input voxel: one matmul of each voxel's channels by the filter as
//   [C, O·kd·kh·kw], the blocks interleaved into the volume by a transpose;
//   any other (MONAI's k 3, s 2) is a 3-D convolution of the input with
//   zeros inserted, as the 2-D fallback (OnnxConvTranspose.cpp).
#include "compiler/onnx/OnnxImporter.h"
#include "llvm/ADT/ScopeExit.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

/// The largest kernel, stride, dilation or pad taken: a convolution is
/// sliced once per depth tap, so a malformed model must not ask for
/// millions of slices.
constexpr int64_t kLargestWindow = 1024;

/// A 3-D window's attributes, its pads resolved (auto_pad included) as
/// begins/ends per spatial axis (D, H, W).
struct Window3d {
  std::vector<int64_t> kernel, strides, dilations, begins, ends;
};

std::vector<int64_t> triple(Importer &im, const NodeProto &n, const char *key) {
  std::vector<int64_t> v = im.attrInts(n, key).value_or(std::vector<int64_t>{1, 1, 1});
  if (v.size() != 3)
    throw im.fail(n, std::string(key) + " needs 3 values for a 3-D window, got " +
                         std::to_string(v.size()));
  for (int64_t d : v)
    if (d < 1 || d > kLargestWindow)
      throw im.fail(n, std::string(key) + " must be in [1, " + std::to_string(kLargestWindow) + "]");
  return v;
}

Window3d window3d(Importer &im, const NodeProto &n, llvm::ArrayRef<int64_t> spatial,
                  std::vector<int64_t> kernel) {
  Window3d w{kernel, triple(im, n, "strides"), triple(im, n, "dilations"), {}, {}};
  for (int64_t k : kernel)
    if (k < 1 || k > kLargestWindow)
      throw im.fail(n, "kernel_shape must be in [1, " + std::to_string(kLargestWindow) + "]");
  std::vector<int64_t> p = im.attrInts(n, "pads").value_or(std::vector<int64_t>(6, 0));
  if (p.size() != 6)
    throw im.fail(n, "pads needs 6 values for a 3-D window, got " + std::to_string(p.size()));
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  for (int i = 0; i < 3; ++i) {
    int64_t begin = p[i], end = p[3 + i];
    if (autoPad == "VALID") {
      begin = end = 0;
    } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t s = w.strides[i], out = (spatial[i] + s - 1) / s;
      int64_t total = std::max<int64_t>(
          0, (out - 1) * s + (kernel[i] - 1) * w.dilations[i] + 1 - spatial[i]);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (autoPad != "NOTSET") {
      throw im.fail(n, "auto_pad '" + autoPad + "' is not supported");
    }
    if (begin < 0 || end < 0 || begin > kLargestWindow || end > kLargestWindow)
      throw im.fail(n, "pads must be in [0, " + std::to_string(kLargestWindow) + "]");
    w.begins.push_back(begin);
    w.ends.push_back(end);
  }
  return w;
}

/// `n` as a 2-D node over `inputs`, writing `out`, with the given window
/// attributes (ONNX's order: pads [h_begin, w_begin, h_end, w_end]) and no
/// auto_pad (the pads are resolved).
NodeProto planar(const NodeProto &n, llvm::ArrayRef<std::string> inputs, const std::string &out,
                 llvm::ArrayRef<std::pair<const char *, std::vector<int64_t>>> window) {
  NodeProto p = n;
  for (size_t i = 0; i < inputs.size(); ++i)
    p.set_input(i, inputs[i]);
  p.set_output(0, out);
  auto *attrs = p.mutable_attribute();
  for (int i = attrs->size() - 1; i >= 0; --i) {
    const std::string &key = attrs->Get(i).name();
    if (key == "auto_pad" || key == "pads" || key == "strides" || key == "dilations" ||
        key == "kernel_shape")
      attrs->DeleteSubrange(i, 1);
  }
  for (const auto &[key, values] : window) {
    onnx::AttributeProto *a = p.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
      a->add_ints(v);
  }
  return p;
}

/// Maps the 2-D node `p` (built from `n`) under the name `n` has plus
/// `suffix`, and returns its result.
Tensor mapPlanar(Importer &im, const NodeProto &n, const NodeProto &p, const std::string &suffix,
                 const Mapping &twoD) {
  im.names[&p] = im.nodeName(n) + suffix;
  auto forget = llvm::make_scope_exit([&] { im.names.erase(&p); });
  twoD(im, p);
  return im.tensors.at(p.output(0));
}

Tensor transposed(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> perm,
                  const std::string &out, const std::string &suffix) {
  Attrs a;
  a.set("perm", ints(im, perm));
  return im.emit(n, "transpose", {x}, a, out, suffix);
}

/// `y` ([N, D, C, H, W], named `name`) made the depth-first form of the
/// node's output, which is its transpose back, erased if nothing reads it.
void keepDepthFirst(Importer &im, const NodeProto &n, Tensor y, const std::string &name) {
  im.depthMajor[n.output(0)] = name;
  Tensor back = transposed(im, n, y, {0, 2, 1, 3, 4}, n.output(0), "channels_first");
  im.removable.push_back(back.value().getDefiningOp());
}

} // namespace

Mapping keptDepthFirst(Mapping canonical, DepthFirst kind) {
  return [canonical, kind](Importer &im, const NodeProto &n) {
    std::vector<std::string> forms;
    int inputs = kind == DepthFirst::Binary ? 2 : kind == DepthFirst::Concat ? n.input_size() : 1;
    for (int i = 0; i < inputs; ++i) {
      auto form = i < n.input_size() ? im.depthMajor.find(n.input(i)) : im.depthMajor.end();
      if (form == im.depthMajor.end())
        return canonical(im, n);
      forms.push_back(form->second);
    }
    if (kind == DepthFirst::Binary &&
        im.tensors.at(forms[0]).shape() != im.tensors.at(forms[1]).shape())
      return canonical(im, n);
    const std::string &out = n.output(0);
    std::string name = out + ".depth_major";
    NodeProto p = n;
    for (size_t i = 0; i < forms.size(); ++i)
      p.set_input(i, forms[i]);
    p.set_output(0, name);
    if (kind == DepthFirst::Concat) { // the axis as it lies in [N, D, C, H, W]
      int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), 5);
      for (onnx::AttributeProto &a : *p.mutable_attribute())
        if (a.name() == "axis")
          a.set_i(axis == 1 ? 2 : axis == 2 ? 1 : axis);
    }
    if (kind != DepthFirst::BatchNorm)
      return keepDepthFirst(im, n, mapPlanar(im, n, p, "", canonical), name);
    // Per channel over [N·D, C, H, W]: the statistics of the same elements.
    Tensor x = im.tensors.at(forms[0]);
    reshaped(im, n, x, {product({x.dim(0), x.dim(1)}), x.dim(2), x.dim(3), x.dim(4)},
             "depth_major_images");
    p.set_input(0, out + ".depth_major_images");
    p.set_output(0, out + ".depth_major_normalized");
    Tensor y = mapPlanar(im, n, p, "", canonical);
    keepDepthFirst(im, n, reshaped(im, n, y, x.shape(), "depth_major"), name);
  };
}

void convVolume(Importer &im, const NodeProto &n, const Mapping &conv2d) {
  Tensor x = im.input(n, 0), w = im.input(n, 1);
  requireRank(im, n, w, 5);
  const std::string &out = n.output(0);
  int64_t N = x.dim(0), C = x.dim(1), D = x.dim(2), H = x.dim(3), W = x.dim(4);
  int64_t O = w.dim(0), kd = w.dim(2);
  Window3d win = window3d(im, n, {D, H, W}, {kd, w.dim(3), w.dim(4)});
  int64_t depth = D + win.begins[0] + win.ends[0], reach = (kd - 1) * win.dilations[0] + 1;
  if (depth < reach)
    throw im.fail(n, "the window's depth " + std::to_string(reach) +
                         " exceeds the padded input's " + std::to_string(depth));
  int64_t outDepth = (depth - reach) / win.strides[0] + 1;

  // The depth taps, stacked after the channels: [N·D', C·kd, H, W].
  // The input depth first: as an op before held it, or transposed here
  // once for every reader after (the branches of an inception block).
  auto form = im.depthMajor.find(n.input(0));
  Tensor t;
  if (form != im.depthMajor.end()) {
    t = im.tensors.at(form->second);
  } else {
    t = transposed(im, n, x, {0, 2, 1, 3, 4}, out + ".input_depth_major", "depth_major");
    im.depthMajor[n.input(0)] = out + ".input_depth_major";
  }
  t = padded(im, n, t, {0, win.begins[0], 0, 0, 0}, {0, win.ends[0], 0, 0, 0}, 0.0,
             out + ".depth_padded");
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < kd; ++i) {
    std::string tap = out + ".tap" + std::to_string(i);
    int64_t start = i * win.dilations[0], end = start + (outDepth - 1) * win.strides[0] + 1;
    Tensor s = t;
    if (start != 0 || end != depth) {
      Attrs a;
      a.set("axes", ints(im, {1}));
      a.set("starts", ints(im, {start}));
      a.set("ends", ints(im, {end}));
      s = im.emit(n, "slice", {t}, a, tap + "_range", "tap");
    }
    if (win.strides[0] > 1 && outDepth > 1)
      s = everyStep(im, n, s, 1, win.strides[0], tap, tap + "_every");
    taps.push_back(kd == 1 ? s : reshaped(im, n, s, {N, outDepth, C, 1, H, W}, "tap" + std::to_string(i)));
  }
  Tensor stacked = taps[0];
  if (kd > 1) {
    Attrs a;
    a.set("axis", B(im).getI64IntegerAttr(3));
    stacked = im.emit(n, "concat", taps, a, out + ".taps", "taps");
  }
  reshaped(im, n, stacked, {product({N, outDepth}), product({C, kd}), H, W}, "image");
  reshaped(im, n, w, {O, product({w.dim(1), kd}), w.dim(3), w.dim(4)}, "image_filter");

  std::vector<std::string> inputs{out + ".image", out + ".image_filter"};
  NodeProto p = planar(n, inputs, out + ".image_result",
                       {{"strides", {win.strides[1], win.strides[2]}},
                        {"dilations", {win.dilations[1], win.dilations[2]}},
                        {"pads", {win.begins[1], win.begins[2], win.ends[1], win.ends[2]}}});
  Tensor y = mapPlanar(im, n, p, "", conv2d); // [N·D', O, H', W']
  y = reshaped(im, n, y, {N, outDepth, O, y.dim(2), y.dim(3)}, "depth_major");
  keepDepthFirst(im, n, y, out + ".depth_major");
}

void poolVolume(Importer &im, const NodeProto &n, const Mapping &pool2d) {
  Tensor x = im.input(n, 0);
  const std::string &out = n.output(0);
  std::vector<int64_t> kernel = im.attrInts(n, "kernel_shape").value_or(std::vector<int64_t>{});
  if (kernel.size() != 3)
    throw im.fail(n, "kernel_shape needs 3 values for a 3-D window, got " +
                         std::to_string(kernel.size()));
  int64_t N = x.dim(0), C = x.dim(1), D = x.dim(2);
  Window3d win = window3d(im, n, {D, x.dim(3), x.dim(4)}, kernel);
  if (win.dilations != std::vector<int64_t>{1, 1, 1})
    throw im.fail(n, "dilated pooling is not supported");

  // Depth first ([N, D, C, H, W]) where the input is held so: the planes
  // are [N, D·C, H, W] and the depth columns [N, 1, D, C·H'·W'].
  auto form = im.depthMajor.find(n.input(0));
  bool depthFirst = form != im.depthMajor.end();
  if (depthFirst)
    x = im.tensors.at(form->second);
  reshaped(im, n, x, {N, product({C, D}), x.dim(3), x.dim(4)}, "planes");
  NodeProto planes = planar(n, {out + ".planes"}, out + ".planes_pooled",
                            {{"kernel_shape", {kernel[1], kernel[2]}},
                             {"strides", {win.strides[1], win.strides[2]}},
                             {"pads", {win.begins[1], win.begins[2], win.ends[1], win.ends[2]}}});
  Tensor y = mapPlanar(im, n, planes, ".planes_pool", pool2d); // [N, C·D, H', W']
  int64_t H = y.dim(2), W = y.dim(3);
  std::vector<int64_t> columnsShape = depthFirst
      ? std::vector<int64_t>{N, 1, D, product({C, H, W})}
      : std::vector<int64_t>{product({N, C}), 1, D, product({H, W})};
  reshaped(im, n, y, columnsShape, "depth_columns");
  NodeProto columns = planar(n, {out + ".depth_columns"}, out + ".depth_pooled",
                             {{"kernel_shape", {kernel[0], 1}},
                              {"strides", {win.strides[0], 1}},
                              {"pads", {win.begins[0], 0, win.ends[0], 0}}});
  y = mapPlanar(im, n, columns, ".depth_pool", pool2d); // [·, 1, D', ·]
  if (!depthFirst)
    return (void)reshaped(im, n, y, {N, C, y.dim(2), H, W}, "");
  keepDepthFirst(im, n, reshaped(im, n, y, {N, y.dim(2), C, H, W}, "depth_major"),
                 out + ".depth_major");
}

namespace {

/// A 3-D transposed convolution's attributes: per spatial axis the pads
/// (auto_pad resolved as ONNX resolves it) and output_padding.
struct Transposed3d {
  std::vector<int64_t> kernel, strides, dilations, begins, ends, extra;
  int64_t groups;
};

Transposed3d transposed3d(Importer &im, const NodeProto &n, Tensor x, Tensor w) {
  requireRank(im, n, w, 5);
  Transposed3d t{{w.dim(2), w.dim(3), w.dim(4)}, triple(im, n, "strides"),
                 triple(im, n, "dilations"), {}, {},
                 im.attrInts(n, "output_padding").value_or(std::vector<int64_t>(3, 0)),
                 im.attrInt(n, "group", 1)};
  int64_t C = x.dim(1);
  if (t.groups < 1 || C % t.groups || w.dim(0) != C)
    throw im.fail(n, "the filter's " + std::to_string(w.dim(0)) + " input channels (in " +
                         std::to_string(t.groups) + " groups) do not fit the input's " +
                         std::to_string(C));
  if (im.attr(n, "output_shape"))
    throw im.fail(n, "output_shape is not supported: give pads and output_padding instead");
  std::vector<int64_t> pads = im.attrInts(n, "pads").value_or(std::vector<int64_t>(6, 0));
  if (pads.size() != 6 || t.extra.size() != 3)
    throw im.fail(n, "pads needs 6 values and output_padding 3 for a 3-D window");
  std::string autoPad = im.attrString(n, "auto_pad", "NOTSET");
  for (int i = 0; i < 3; ++i) {
    int64_t k = t.kernel[i], s = t.strides[i], span = (k - 1) * t.dilations[i] + 1;
    if (k < 1 || k > kLargestWindow || t.extra[i] < 0 || (t.extra[i] >= s && t.extra[i] >= t.dilations[i]))
      throw im.fail(n, "the window must be in [1, " + std::to_string(kLargestWindow) +
                           "], output_padding below the stride or the dilation");
    int64_t begin = pads[i], end = pads[3 + i];
    if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
      int64_t total = std::max<int64_t>(0, t.extra[i] + span - s);
      begin = autoPad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    } else if (autoPad == "VALID") {
      begin = end = 0;
    } else if (autoPad != "NOTSET") {
      throw im.fail(n, "auto_pad '" + autoPad + "' is not supported");
    }
    if (begin < 0 || end < 0 || begin > kLargestWindow || end > kLargestWindow ||
        (x.dim(2 + i) - 1) * s + span + t.extra[i] - begin - end < 1)
      throw im.fail(n, "pads must be in [0, " + std::to_string(kLargestWindow) +
                           "] and leave an output");
    t.begins.push_back(begin);
    t.ends.push_back(end);
  }
  return t;
}

/// Where the window is the stride (undilated, ungrouped): each input voxel
/// paints one k³ block, one matmul by the filter as [C, O·kd·kh·kw], the
/// blocks interleaved into the volume, cropped and extended at its edges.
void paintedBlocks(Importer &im, const NodeProto &n, Tensor x, Tensor w, Tensor bias,
                   const Transposed3d &t) {
  const std::string &out = n.output(0);
  const std::vector<int64_t> &k = t.kernel;
  int64_t N = x.dim(0), C = x.dim(1), D = x.dim(2), H = x.dim(3), W = x.dim(4);
  std::vector<int64_t> begins(5, 0), ends(5, 0);
  for (int i = 0; i < 3; ++i) {
    begins[2 + i] = -t.begins[i];
    ends[2 + i] = t.extra[i] - t.ends[i];
  }
  int64_t O = w.dim(1), block = product({O, k[0], k[1], k[2]});
  Tensor voxels = reshaped(im, n, x, {N, C, product({D, H, W})}, "voxels");
  Tensor filter = reshaped(im, n, w, {C, block}, "blocks_filter");
  Attrs a;
  a.set("transpose_a", B(im).getBoolAttr(true));
  Tensor blocks = im.emit(n, "matmul", {voxels, filter}, a, out + ".blocks", "blocks");
  blocks = reshaped(im, n, blocks, {N, D, H, W, O, k[0], k[1], k[2]}, "block_cells");
  blocks = transposed(im, n, blocks, {0, 4, 1, 5, 2, 6, 3, 7}, out + ".interleaved", "interleaved");
  bool edges = llvm::any_of(begins, [](int64_t v) { return v; }) ||
               llvm::any_of(ends, [](int64_t v) { return v; });
  std::string volume = bias || edges ? out + ".volume" : out;
  Tensor y = reshaped(im, n, blocks, {N, O, D * k[0], H * k[1], W * k[2]},
                      volume == out ? "" : "volume");
  if (edges)
    y = padded(im, n, y, begins, ends, 0.0, bias ? out + ".cropped" : out);
  if (bias) {
    requireRank(im, n, bias, 1);
    im.emit(n, "add", {y, reshaped(im, n, bias, {bias.dim(0), 1, 1, 1}, "bias")});
  }
}

/// Otherwise, as in 2-D (OnnxConvTranspose.cpp): the stride-1 convolution
/// of the input with s - 1 zeros between neighbours and k_eff - 1 - p more
/// at each border, by the filter flipped on each spatial axis with its
/// input and output channels exchanged within each group, as a 3-D
/// convolution (convVolume). It multiplies the inserted zeros too: s³
/// times the products a transposed convolution needs.
void zeroInserted(Importer &im, const NodeProto &n, Tensor x, Tensor w, const Transposed3d &t) {
  const std::string &out = n.output(0);
  // The borders: the convolution's pads, or crops where negative.
  std::vector<int64_t> crops(10, 0), pads(6, 0);
  for (int i = 0; i < 3; ++i) {
    int64_t span = (t.kernel[i] - 1) * t.dilations[i] + 1;
    int64_t begin = span - 1 - t.begins[i];
    int64_t end = span - 1 - t.ends[i] + t.extra[i] - (t.strides[i] - 1);
    crops[2 + i] = std::min<int64_t>(begin, 0);
    crops[7 + i] = std::min<int64_t>(end, 0);
    pads[i] = std::max<int64_t>(begin, 0);
    pads[3 + i] = std::max<int64_t>(end, 0);
  }
  llvm::ArrayRef<int64_t> both(crops);
  im.tensors[out + ".bordered"] = padded(im, n, zerosBetween(im, n, x, t.strides),
                                         both.take_front(5), both.drop_front(5), 0.0,
                                         out + ".bordered");
  int64_t C = x.dim(1), g = t.groups, O = w.dim(1) * g;
  const std::vector<int64_t> &k = t.kernel;
  Tensor f = reshaped(im, n, w, {g, C / g, w.dim(1), k[0], k[1], k[2]}, "filter_groups");
  f = transposed(im, n, f, {0, 2, 1, 3, 4, 5}, out + ".filter_swapped", "filter_swapped");
  f = reshaped(im, n, f, {O, C / g, k[0], k[1], k[2]}, "filter");
  f = flipped(im, n, flipped(im, n, flipped(im, n, f, 2, "flip_d"), 3, "flip_h"), 4, "flip_w");
  im.tensors[out + ".filter_flipped"] = f;

  NodeProto c = n;
  c.set_op_type("Conv");
  c.set_input(0, out + ".bordered");
  c.set_input(1, out + ".filter_flipped");
  c.clear_attribute();
  for (const auto &[key, values] :
       std::vector<std::pair<const char *, std::vector<int64_t>>>{
           {"strides", {1, 1, 1}}, {"dilations", t.dilations}, {"pads", pads},
           {"group", {g}}}) {
    onnx::AttributeProto *a = c.add_attribute();
    a->set_name(key);
    if (std::string(key) == "group") {
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(values[0]);
      continue;
    }
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t v : values)
      a->add_ints(v);
  }
  im.names[&c] = im.nodeName(n);
  auto forget = llvm::make_scope_exit([&] { im.names.erase(&c); });
  convVolume(im, c, conv);
}

} // namespace

void convTransposeVolume(Importer &im, const NodeProto &n, const Mapping &) {
  Tensor x = im.input(n, 0), w = im.input(n, 1), bias = im.optionalInput(n, 2);
  Transposed3d t = transposed3d(im, n, x, w);
  if (t.strides == t.kernel && t.dilations == std::vector<int64_t>{1, 1, 1} && t.groups == 1)
    return paintedBlocks(im, n, x, w, bias, t);
  zeroInserted(im, n, x, w, t);
}

} // namespace ampc::onnx_import
