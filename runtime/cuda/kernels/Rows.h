// Row kernels' building blocks (layer norm, softmax): one warp per row, the
// row held in registers where it fits (one read of it from memory), sums in
// double reduced across the warp (sums down the columns: Columns.h). The
// reduction order differs from the CPU's sequential one, so these kernels
// agree with the CPU within the Accumulated tolerance
// (runtime/core/KernelTraits.h), and run to run they give the same bits.
#ifndef AMPC_RUNTIME_CUDA_ROWS_H
#define AMPC_RUNTIME_CUDA_ROWS_H

#include <type_traits>

#include "runtime/cuda/CudaCommon.h"

namespace ampc::rt::cuda::rows {

constexpr int kWarp = 32, kRowsPerBlock = kThreads / kWarp;
/// Elements per lane kept in registers: rows of up to 128 elements (the
/// attention softmax at seq 128) are read from memory once. Longer rows
/// (BERT's 768-wide layer norms) are read again on each pass, from the
/// caches (PerLane 0): holding them in registers unrolled each pass's
/// loads and stores, of every dtype, 32 times over, and on an H100 that
/// kernel ran 20x slower than this loop, its warps waiting on instruction
/// fetches, one warp in eight resident for its 154 registers (ncu).
constexpr int kShortRow = 4;

/// The PerLane of RowShare for rows of n elements.
inline int perLaneFor(int64_t n) { return n <= kWarp * kShortRow ? kShortRow : 0; }

/// Calls launch(std::integral_constant<int, PerLane>) for rows of n elements.
template <typename Launch> void withPerLane(int64_t n, Launch launch) {
  if (perLaneFor(n) == kShortRow)
    return launch(std::integral_constant<int, kShortRow>());
  return launch(std::integral_constant<int, 0>());
}

/// Blocks for one warp per row over `rows` rows.
inline unsigned blocksForRows(int64_t rows) {
  return (unsigned)std::clamp<int64_t>((rows + kRowsPerBlock - 1) / kRowsPerBlock, 1, 65535 * 8);
}

/// A loop over rows [0, n), one per warp of the grid.
#define AMPC_ROW_STRIDE(row, n)                                                                    \
  for (int64_t row = blockIdx.x * (int64_t)::ampc::rt::cuda::rows::kRowsPerBlock +                 \
                     threadIdx.x / ::ampc::rt::cuda::rows::kWarp;                                  \
       row < (n); row += (int64_t)gridDim.x * ::ampc::rt::cuda::rows::kRowsPerBlock)

__device__ inline int lane() { return threadIdx.x % kWarp; }

__device__ inline double warpSum(double v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    v += __shfl_xor_sync(0xffffffffu, v, offset);
  return v;
}

__device__ inline float warpMax(float v) {
  for (int offset = kWarp / 2; offset > 0; offset /= 2) {
    float other = __shfl_xor_sync(0xffffffffu, v, offset);
    v = other > v ? other : v;
  }
  return v;
}

/// A lane's share of one row of `n` elements at `base` in `t`: elements
/// lane, lane + 32, ...; with PerLane > 0 (n <= 32 * PerLane), read once
/// into registers.
template <int PerLane> struct RowShare {
  static constexpr bool kCached = PerLane > 0;
  float v[kCached ? PerLane : 1];
  const View *t;
  int64_t base, n;

  __device__ RowShare(const View &view, int64_t rowBase, int64_t count)
      : t(&view), base(rowBase), n(count) {
    if constexpr (kCached) {
#pragma unroll
      for (int j = 0; j < PerLane; ++j) {
        int64_t k = lane() + (int64_t)j * kWarp;
        v[j] = k < n ? load(t->data, t->dtype, base + k) : 0.0f;
      }
    }
  }
  /// The lane's element in slot j, index k of the row.
  __device__ float at(int j, int64_t k) const {
    if constexpr (kCached)
      return v[j];
    else
      return load(t->data, t->dtype, base + k);
  }
  /// f(j, k, value) for each of the lane's elements: j its slot, k its
  /// index in the row.
  template <typename F> __device__ void each(F f) const {
    if constexpr (kCached) {
#pragma unroll
      for (int j = 0; j < PerLane; ++j) {
        int64_t k = lane() + (int64_t)j * kWarp;
        if (k < n)
          f(j, k, at(j, k));
      }
    } else {
      for (int64_t k = lane(); k < n; k += kWarp)
        f(0, k, at(0, k));
    }
  }
};

} // namespace ampc::rt::cuda::rows

#endif
