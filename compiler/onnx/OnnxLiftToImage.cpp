// ONNX's convolutions, pools and batch norms over other ranks than images
// ([N, C, H, W]) as their 2-D forms, so that each runs on every backend
// with the 2-D kernels and its gradient is theirs (docs/onnx.md, "Ops"):
// - 1-D windows (PyTorch's Conv1d, ConvTranspose1d, MaxPool1d, AvgPool1d):
//   the input [N, C, L] as [N, C, 1, L], the filter [O, I, K] as
//   [O, I, 1, K], each window attribute with a leading 1 (pads [b, e] as
//   [0, b, 0, e]), the result back to rank 3;
// - batch norm (BatchNorm1d over [N, C] or [N, C, L], BatchNorm3d) and the
//   global pools, which treat every spatial element alike: the spatial
//   axes merged into [N, C, rest, last] (or [N, C, 1, 1]);
// - 3-D windows through `volume` (OnnxVolume.cpp), where the op has one.
// The reshapes move no data, and their gradients are exact.
#include "compiler/onnx/OnnxImporter.h"
#include "llvm/ADT/ScopeExit.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

namespace {

/// Node `n`'s 1-D window attributes in their 2-D form; a 1-D attribute with
/// the wrong number of values is an error naming it.
void widen(Importer &im, const NodeProto &original, NodeProto &n) {
  for (onnx::AttributeProto &a : *n.mutable_attribute()) {
    const std::string &key = a.name();
    bool pads = key == "pads";
    bool window = key == "kernel_shape" || key == "strides" || key == "dilations";
    if (!pads && !window && key != "output_padding")
      continue;
    size_t want = pads ? 2 : 1;
    if (static_cast<size_t>(a.ints_size()) != want)
      throw im.fail(original, key + " needs " + std::to_string(want) + " value" +
                                  (want > 1 ? "s" : "") + " for a 1-D window, got " +
                                  std::to_string(a.ints_size()));
    std::vector<int64_t> v(a.ints().begin(), a.ints().end());
    std::vector<int64_t> wide = pads ? std::vector<int64_t>{0, v[0], 0, v[1]}
                                     : std::vector<int64_t>{window ? 1 : 0, v[0]};
    a.clear_ints();
    for (int64_t d : wide)
      a.add_ints(d);
  }
}

/// `shape` [N, C, spatial...] as an image [N, C, H, W]: a 1-D length as one
/// row, no spatial axes as 1 x 1, more than two merged into H.
std::vector<int64_t> asImage(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> image(shape.begin(), shape.begin() + 2);
  if (shape.size() == 2)
    return {shape[0], shape[1], 1, 1};
  image.push_back(product(shape.slice(2, shape.size() - 3)));
  image.push_back(shape.back());
  return image;
}

} // namespace

Mapping liftedToImage(Mapping twoD, Lift lift, Volume volume) {
  return [twoD, lift, volume](Importer &im, const NodeProto &n) {
    Tensor x = im.input(n, 0);
    int64_t rank = x.rank();
    bool window = lift == Lift::Window1d || lift == Lift::WindowAndFilter1d;
    if (rank == 4 || rank < 2 || (lift != Lift::SameShape && rank == 2))
      return twoD(im, n);
    if (window && rank == 5 && volume)
      return volume(im, n, twoD);
    if (window && rank != 3)
      throw im.fail(n, std::string(volume ? "only 1-D, 2-D and 3-D" : "only 1-D and 2-D") +
                           " windows are supported, got a rank-" + std::to_string(rank) +
                           " input");
    NodeProto lifted = n;
    if (window)
      widen(im, n, lifted);
    const std::string &out = n.output(0);
    reshaped(im, n, x, asImage(x.shape()), "image");
    lifted.set_input(0, out + ".image");
    if (lift == Lift::WindowAndFilter1d) {
      Tensor w = im.input(n, 1);
      if (w.rank() != 3)
        throw im.fail(n, "a 1-D input needs a rank-3 filter, got rank " +
                             std::to_string(w.rank()));
      reshaped(im, n, w, asImage(w.shape()), "image_filter");
      lifted.set_input(1, out + ".image_filter");
    }
    lifted.set_output(0, out + ".image_result");
    im.names[&lifted] = im.nodeName(n);
    {
      auto forget = llvm::make_scope_exit([&] { im.names.erase(&lifted); });
      twoD(im, lifted);
    }
    Tensor y = im.tensors.at(out + ".image_result");
    std::vector<int64_t> shape = y.shape();
    if (window)
      shape.erase(shape.begin() + 2);
    else if (lift == Lift::SameShape)
      shape = x.shape();
    else // a global pool: [N, C, 1, ...]
      shape.resize(rank, 1);
    reshaped(im, n, y, shape, "");
  };
}

} // namespace ampc::onnx_import
