// ONNX ops that only move elements, as reshapes, transposes and a
// broadcast (docs/onnx.md, "Ops"): DepthToSpace (PixelShuffle),
// SpaceToDepth and Tile. Each is exact at every level, and its gradient is
// the same moves backward.
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

Tensor reshaped(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> shape,
                const std::string &suffix) {
  Attrs a;
  a.set("shape", ints(im, shape));
  return im.emit(n, "reshape", {x}, a, suffix.empty() ? n.output(0) : n.output(0) + "." + suffix,
                 suffix);
}

void broadcastCopies(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> split,
                     llvm::ArrayRef<int64_t> copies, llvm::ArrayRef<int64_t> result) {
  Tensor t = reshaped(im, n, x, split, "split");
  t = im.emit(n, "add", {t, im.fill(n, copies, 0.0, t, "copies")}, {}, n.output(0) + ".copies",
              "copies");
  reshaped(im, n, t, result, "");
}

namespace {

Tensor transposed(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> perm,
                  const std::string &suffix) {
  Attrs a;
  a.set("perm", ints(im, perm));
  return im.emit(n, "transpose", {x}, a, n.output(0) + "." + suffix, suffix);
}

int64_t blockSize(Importer &im, const NodeProto &n) {
  int64_t b = im.attrInt(n, "blocksize", 0);
  if (b < 1)
    throw im.fail(n, "needs a positive blocksize");
  return b;
}

} // namespace

/// DepthToSpace: [N, C, H, W] -> [N, C / b², H b, W b]. DCR reads the
/// channels as [b, b, C / b²], CRD (PixelShuffle's order) as [C / b², b, b].
void depthToSpace(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  requireRank(im, n, x, 4);
  int64_t b = blockSize(im, n), N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  if (C % (b * b))
    throw im.fail(n, "its " + std::to_string(C) + " channels are not a multiple of blocksize² (" +
                         std::to_string(b * b) + ")");
  std::string mode = im.attrString(n, "mode", "DCR");
  if (mode != "DCR" && mode != "CRD")
    throw im.fail(n, "mode '" + mode + "' is not DCR or CRD");
  bool dcr = mode == "DCR";
  Tensor t = reshaped(im, n, x,
                      dcr ? std::vector<int64_t>{N, b, b, C / (b * b), H, W}
                          : std::vector<int64_t>{N, C / (b * b), b, b, H, W},
                      "blocks");
  t = transposed(im, n, t, dcr ? std::vector<int64_t>{0, 3, 4, 1, 5, 2}
                               : std::vector<int64_t>{0, 1, 4, 2, 5, 3},
                 "interleaved");
  reshaped(im, n, t, {N, C / (b * b), H * b, W * b}, "");
}

/// SpaceToDepth: [N, C, H, W] -> [N, C b², H / b, W / b], DCR's order.
void spaceToDepth(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  requireRank(im, n, x, 4);
  int64_t b = blockSize(im, n), N = x.dim(0), C = x.dim(1), H = x.dim(2), W = x.dim(3);
  if (H % b || W % b)
    throw im.fail(n, "its " + std::to_string(H) + " x " + std::to_string(W) +
                         " image does not divide into blocks of " + std::to_string(b));
  Tensor t = reshaped(im, n, x, {N, C, H / b, b, W / b, b}, "blocks");
  t = transposed(im, n, t, {0, 3, 5, 1, 2, 4}, "stacked");
  reshaped(im, n, t, {N, C * b * b, H / b, W / b}, "");
}

/// Tile: each axis d split as [1, n_d], an add of zeros broadcast to
/// [repeats_d, n_d], and the axes merged back: copies, whose gradient sums.
void tile(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::vector<int64_t> repeats = im.intsInput(n, 1);
  if ((int64_t)repeats.size() != x.rank())
    throw im.fail(n, "has " + std::to_string(repeats.size()) + " repeats for a rank-" +
                         std::to_string(x.rank()) + " input");
  std::vector<int64_t> split, copies, result;
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0)
      throw im.fail(n, "a repeat count is negative");
    split.insert(split.end(), {1, x.dim(d)});
    copies.insert(copies.end(), {repeats[d], x.dim(d)});
    result.push_back(product({repeats[d], x.dim(d)}));
  }
  if (split == copies)
    return im.alias(n, x);
  broadcastCopies(im, n, x, split, copies, result);
}

} // namespace ampc::onnx_import
