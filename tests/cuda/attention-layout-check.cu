// The shared memory of the tensor-core attention (runtime/cuda/kernels/
// AttentionTiles.h), walked on the host (no GPU needed): for f16 and bf16
// at head_dim 64 and 128, forward and backward, every part starts 128-byte
// aligned and each warp's strips where WMMA can load them (32 bytes), no
// two parts overlap, the staged results fit in the two tiles they reuse,
// and the whole fits the opt-in limit of sm_90 (227 KiB) and of sm_80
// (163 KiB). Exit 0: the layouts hold; 1: they do not (each fault named).
#include <cstdio>
#include <utility>
#include <vector>

#include "runtime/cuda/kernels/AttentionTiles.h"

using namespace ampc::rt::cuda::attention;

namespace {

int faults = 0;

void fault(const char *layout, const char *what) {
  std::printf("%s: %s\n", layout, what);
  ++faults;
}

/// Parts as (start, bytes) in carve order, and the layout's size.
void check(const char *layout, std::vector<std::pair<uintptr_t, size_t>> parts, size_t bytes,
           std::vector<size_t> strips) {
  for (size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].first % 128 != 0)
      fault(layout, "a part is not 128-byte aligned");
    if (i + 1 < parts.size() && parts[i].first + parts[i].second > parts[i + 1].first)
      fault(layout, "two parts overlap");
  }
  if (parts.back().first + parts.back().second > bytes)
    fault(layout, "the last part runs past the size");
  for (size_t strip : strips)
    if (strip % 32 != 0)
      fault(layout, "a warp's strip is not 32-byte aligned");
  if (bytes > 163 * 1024)
    fault(layout, "more than sm_80's 163 KiB");
  if (bytes > 227 * 1024)
    fault(layout, "more than sm_90's 227 KiB");
}

template <typename T, int D> void checkLayouts(const char *forwardName, const char *backwardName) {
  size_t tile = kTile * kRowStride<D> * sizeof(T), scores = kStrip * kScoreStride * sizeof(float),
         probs = kStrip * kProbStride * sizeof(T);
  ForwardLayout<T, D> f(0);
  auto at = [](const void *p) { return reinterpret_cast<uintptr_t>(p); };
  check(forwardName,
        {{at(f.q), tile}, {at(f.k), tile}, {at(f.v), tile}, {at(f.scores), kStripWarps * scores},
         {at(f.probs), kStripWarps * probs}, {at(f.factors), kStripWarps * kStrip * 4}},
        f.bytes, {scores, probs, size_t(kStrip * kStageStride<D> * 4)});
  if (at(f.v) != at(f.k) + tile)
    fault(forwardName, "the k and v tiles that stage the results are not adjacent");
  BackwardLayout<T, D> b(0);
  check(backwardName,
        {{at(b.rowsA), tile}, {at(b.rowsB), tile}, {at(b.tileA), tile}, {at(b.tileB), tile},
         {at(b.scores), kStripWarps * scores}, {at(b.dprobs), kStripWarps * scores},
         {at(b.probs), kStripWarps * probs}, {at(b.grads), kStripWarps * probs},
         {at(b.lse), kTile * 4}, {at(b.dot), kTile * 4}},
        b.bytes, {scores, probs, size_t(kStrip * kStageStride<D> * 4)});
  if (at(b.tileB) != at(b.tileA) + tile)
    fault(backwardName, "the walked tiles that stage the results are not adjacent");
  if (!kTwoTilesStage<D>)
    fault(forwardName, "the staged results do not fit in two tiles");
}

} // namespace

int main() {
  checkLayouts<__half, 64>("forward f16 64", "backward f16 64");
  checkLayouts<__half, 128>("forward f16 128", "backward f16 128");
  checkLayouts<__nv_bfloat16, 64>("forward bf16 64", "backward bf16 64");
  checkLayouts<__nv_bfloat16, 128>("forward bf16 128", "backward bf16 128");
  if (faults == 0)
    std::printf("the attention's shared-memory layouts hold\n");
  return faults == 0 ? 0 : 1;
}
