// What every CUDA kernel file shares: error checks, a tensor view that can be
// passed to a kernel by value, element loads and stores in any dtype through
// the shared numerics (so the device rounds exactly as the host does), and
// grid-stride launch sizes.
#ifndef AMPC_RUNTIME_CUDA_CUDACOMMON_H
#define AMPC_RUNTIME_CUDA_CUDACOMMON_H

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/core/DType.h"
#include "runtime/core/Errors.h"
#include "runtime/numerics/Fp8.h"
#include "runtime/numerics/Half.h"

namespace ampc::rt::cuda {

/// Throws RuntimeError naming the call when a CUDA call failed.
inline void check(cudaError_t status, const char *what) {
  if (status != cudaSuccess)
    throw RuntimeError(std::string("cuda: ") + what + ": " + cudaGetErrorString(status));
}
#define AMPC_CUDA_CHECK(call) ::ampc::rt::cuda::check((call), #call)

constexpr int kMaxRank = 8;

/// A tensor as a kernel sees it: its device address, dtype, size and shape,
/// small enough to pass by value.
struct View {
  void *data;
  DType dtype;
  int rank;
  int64_t size;
  int64_t shape[kMaxRank];
};

inline View viewOf(const TensorRef &t) {
  if (t.rank() > kMaxRank)
    throw RuntimeError("cuda: tensors of rank above 8 are not supported");
  View v{t.data, t.dtype, (int)t.rank(), t.size(), {}};
  for (int i = 0; i < v.rank; ++i)
    v.shape[i] = t.shape[i];
  return v;
}

/// Whether environment variable `name` is set to `value`: the switches that
/// turn a path off to tell a fault of it from another (docs/cuda.md).
inline bool envIs(const char *name, const char *value) {
  const char *v = std::getenv(name);
  return v && std::string(v) == value;
}

/// Strides of `shape` right-aligned to `out`'s rank, 0 on broadcast dims.
inline void alignedStrides(const std::vector<int64_t> &shape, const std::vector<int64_t> &out,
                           int64_t *strides) {
  size_t off = out.size() - shape.size();
  int64_t s = 1;
  for (int64_t d = (int64_t)out.size() - 1; d >= 0; --d) {
    if (d < (int64_t)off) {
      strides[d] = 0;
      continue;
    }
    int64_t dim = shape[d - off];
    strides[d] = dim == 1 ? 0 : s;
    s *= dim;
  }
}

/// Element i as f32, and f32 stored as element i (rounded to nearest even).
__device__ inline float load(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F32: return static_cast<const float *>(p)[i];
  case DType::F16: return num::f16ToF32(static_cast<const uint16_t *>(p)[i]);
  case DType::BF16: return num::bf16ToF32(static_cast<const uint16_t *>(p)[i]);
  case DType::F64: return (float)static_cast<const double *>(p)[i];
  case DType::I32: return (float)static_cast<const int32_t *>(p)[i];
  case DType::I64: return (float)static_cast<const int64_t *>(p)[i];
  case DType::I1: return static_cast<const uint8_t *>(p)[i] ? 1.0f : 0.0f;
  case DType::F8E4M3: return num::e4m3ToF32(static_cast<const uint8_t *>(p)[i]);
  case DType::F8E5M2: return num::e5m2ToF32(static_cast<const uint8_t *>(p)[i]);
  }
  return 0.0f;
}

__device__ inline void store(void *p, DType t, int64_t i, float v) {
  switch (t) {
  case DType::F32: static_cast<float *>(p)[i] = v; return;
  case DType::F16: static_cast<uint16_t *>(p)[i] = num::f32ToF16(v); return;
  case DType::BF16: static_cast<uint16_t *>(p)[i] = num::f32ToBf16(v); return;
  case DType::F64: static_cast<double *>(p)[i] = v; return;
  case DType::I32: static_cast<int32_t *>(p)[i] = (int32_t)v; return;
  case DType::I64: static_cast<int64_t *>(p)[i] = (int64_t)v; return;
  case DType::I1: static_cast<uint8_t *>(p)[i] = v != 0.0f; return;
  case DType::F8E4M3: static_cast<uint8_t *>(p)[i] = num::f32ToE4M3(v); return;
  case DType::F8E5M2: static_cast<uint8_t *>(p)[i] = num::f32ToE5M2(v); return;
  }
}

/// A result and the rounded copy of it a step may carry (kRoundedCopy;
/// copy.data null where it has none): each value is stored to both, so the
/// copy holds the f32 result rounded as a cast rounds it.
struct ResultAndCopy {
  View y, copy;
  __device__ void store(int64_t i, float v) const {
    cuda::store(y.data, y.dtype, i, v);
    if (copy.data)
      cuda::store(copy.data, copy.dtype, i, v);
  }
};

/// An integer element (ids, labels) as int64.
__device__ inline int64_t loadIndex(const void *p, DType t, int64_t i) {
  return t == DType::I64 ? static_cast<const int64_t *>(p)[i] : static_cast<const int32_t *>(p)[i];
}

/// Rounds f32 through `t` and back (a cast fused into a reader), or leaves it.
__device__ inline float roundThrough(float v, DType t) {
  if (t == DType::F16)
    return num::f16ToF32(num::f32ToF16(v));
  if (t == DType::BF16)
    return num::bf16ToF32(num::f32ToBf16(v));
  return v;
}

constexpr int kThreads = 256;

/// Blocks for a grid-stride loop over n elements.
inline unsigned blocksFor(int64_t n) {
  return (unsigned)std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, 65535 * 8);
}

#define AMPC_GRID_STRIDE(i, n)                                                                     \
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < (n);                       \
       i += (int64_t)gridDim.x * blockDim.x)

/// Elements a thread loads before it stores any (unrolledStride): one
/// 2-byte load in flight per thread keeps a fraction of an H100's memory
/// busy, so memory-bound passes take a few at a time.
constexpr int kUnroll = 4;

/// Blocks for an unrolled grid-stride pass over n elements.
inline unsigned blocksForUnrolled(int64_t n) { return blocksFor((n + kUnroll - 1) / kUnroll); }

/// For i = first, first + step, ... below end, Unroll at a time: v[u] =
/// load(i) for each, then store(i, v[u]) for each.
template <int Unroll = kUnroll, typename Load, typename Store>
__device__ void unrolledStride(int64_t first, int64_t end, int64_t step, Load load, Store store) {
  for (int64_t i = first; i < end; i += step * Unroll) {
    decltype(load(i)) v[Unroll];
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (i + u * step < end)
        v[u] = load(i + u * step);
#pragma unroll
    for (int u = 0; u < Unroll; ++u)
      if (i + u * step < end)
        store(i + u * step, v[u]);
  }
}

/// unrolledStride over [0, n), a grid-stride pass.
template <typename Load, typename Store>
__device__ void unrolledElements(int64_t n, Load load, Store store) {
  unrolledStride(blockIdx.x * (int64_t)blockDim.x + threadIdx.x, n,
                 (int64_t)gridDim.x * blockDim.x, load, store);
}

/// The entry of a multi-tensor list (updates, copies, the finite check)
/// whose chunks hold `chunk`: entries in order of their `firstChunk`.
template <typename Entry>
__device__ const Entry &entryOfChunk(const Entry *entries, int count, int64_t chunk) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (entries[mid].firstChunk <= chunk)
      lo = mid;
    else
      hi = mid - 1;
  }
  return entries[lo];
}

} // namespace ampc::rt::cuda

#endif
