// Rows held in registers four consecutive elements at a time, for the row
// kernels (layer norm) on rows of up to 1,024 elements: lane l holds
// elements 4(l + 32c) .. 4(l + 32c) + 3 of chunk c, read with one 8- or
// 16-byte load per chunk, every chunk's load in flight at once, and
// converted to f32 as it arrives (the dtype is the same for the whole warp). (Element by element, a lane's 24 loads of a 768-wide row ran
// one after another, each waiting on the caches: BERT-base's layer norm
// took 38 µs a call for 12 MB, and its backward 130 µs.)
#ifndef AMPC_RUNTIME_CUDA_VECTORROWS_H
#define AMPC_RUNTIME_CUDA_VECTORROWS_H

#include <initializer_list>

#include "runtime/cuda/kernels/Quads.h"
#include "runtime/cuda/kernels/Rows.h"

namespace ampc::rt::cuda::rows {

constexpr int kVector = kQuad, kMaxChunks = 8;

/// A lane's share of a row: kVector elements per chunk.
template <int Chunks> using Share = float[Chunks][kVector];

/// Whether rows of n elements of `views` can be held as chunks: n a
/// multiple of 4 up to 1,024, and each view one that quads fit (quadsFit:
/// f32, f16 or bf16 aligned to 4 of its elements; a view with no data is
/// left out), so that AMPC_CUDA_QUADS=0 turns these rows off too.
inline bool vectorRows(int64_t n, std::initializer_list<View> views) {
  if (n <= 0 || n % kVector != 0 || n > kWarp * kVector * kMaxChunks)
    return false;
  return quadsFit(views);
}

/// Calls launch(std::integral_constant<int, Chunks>) for rows of n
/// elements: the fewest of 2, 4, 6 or 8 chunks a lane that hold them.
template <typename Launch> void withChunks(int64_t n, Launch launch) {
  int64_t perChunk = kWarp * kVector;
  if (n <= 2 * perChunk)
    return launch(std::integral_constant<int, 2>());
  if (n <= 4 * perChunk)
    return launch(std::integral_constant<int, 4>());
  if (n <= 6 * perChunk)
    return launch(std::integral_constant<int, 6>());
  return launch(std::integral_constant<int, 8>());
}

/// The index in the row of chunk c's first element for this lane.
__device__ inline int64_t chunkStart(int c) { return kVector * (lane() + (int64_t)c * kWarp); }

/// Reads this lane's chunk c of the row at `base` (a chunk inside the row).
__device__ inline void loadChunk(const View &t, int64_t base, int c, float *v) {
  withFloatType(t.dtype,
                [&](auto type) { load4<decltype(type)::value>(t.data, base + chunkStart(c), v); });
}

/// Reads this lane's chunks of the row of n elements at `base` (zeros past
/// the row's end).
template <int Chunks>
__device__ void loadRow(const View &t, int64_t base, int64_t n, Share<Chunks> &v) {
#pragma unroll
  for (int c = 0; c < Chunks; ++c) {
    if (chunkStart(c) < n) {
      loadChunk(t, base, c, v[c]);
    } else {
#pragma unroll
      for (int e = 0; e < kVector; ++e)
        v[c][e] = 0.0f;
    }
  }
}

/// Writes this lane's chunks of the row of n elements at `base`.
template <int Chunks>
__device__ void storeRow(const View &t, int64_t base, int64_t n, const Share<Chunks> &v) {
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
    if (chunkStart(c) < n)
      withFloatType(t.dtype, [&](auto type) {
        store4<decltype(type)::value>(t.data, base + chunkStart(c), v[c]);
      });
}

/// Writes a result and its rounded copy, if the step has one.
template <int Chunks>
__device__ void storeRow(const ResultAndCopy &y, int64_t base, int64_t n, const Share<Chunks> &v) {
  storeRow<Chunks>(y.y, base, n, v);
  if (y.copy.data)
    storeRow<Chunks>(y.copy, base, n, v);
}

/// f(c) for each chunk this lane holds in the row of n elements.
template <int Chunks, typename F> __device__ void eachChunk(int64_t n, F f) {
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
    if (chunkStart(c) < n)
      f(c);
}

/// f(c, e, k) for each element this lane holds in the row: chunk c, slot
/// e, index k in the row.
template <int Chunks, typename F> __device__ void eachHeld(int64_t n, F f) {
#pragma unroll
  for (int c = 0; c < Chunks; ++c)
    if (chunkStart(c) < n) {
#pragma unroll
      for (int e = 0; e < kVector; ++e)
        f(c, e, chunkStart(c) + e);
    }
}

} // namespace ampc::rt::cuda::rows

#endif
