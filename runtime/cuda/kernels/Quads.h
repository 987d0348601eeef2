// Memory-bound passes that read and write four consecutive elements at a
// time: one 8-byte (f16, bf16) or 16-byte (f32) load per operand where four
// 2- or 4-byte loads were. A pass takes quads where every operand is a float
// dtype at an address aligned to four of its elements (the CUDA target places
// buffers at 256 bytes), and the last n % 4 elements one at a time. Each
// element is computed exactly as before, so the results are the same bits.
// (The finite check read the simplenet step's 100 MB of f16 gradients 2 bytes
// a load at 0.64 TB/s of the H100's 3.35.)
#ifndef AMPC_RUNTIME_CUDA_QUADS_H
#define AMPC_RUNTIME_CUDA_QUADS_H

#include <initializer_list>
#include <type_traits>

#include "runtime/cuda/CudaCommon.h"

namespace ampc::rt::cuda {

constexpr int kQuad = 4;

/// Quads a thread loads before it stores any: two quads keep 8 elements of
/// each operand in flight (unrolledStride keeps 4 single ones), and four held
/// Adam's update to one block an SM (130 registers).
constexpr int kQuadUnroll = 2;

/// The number of consecutive elements a unit of a pass holds: 1 or kQuad.
template <int W> using Width = std::integral_constant<int, W>;

/// Whether the passes may take quads: AMPC_CUDA_QUADS=0 turns them off, to
/// tell a fault of theirs from another (docs/cuda.md).
inline bool quadsEnabled() {
  static const bool enabled = !envIs("AMPC_CUDA_QUADS", "0");
  return enabled;
}

/// Whether a pointer to `t` elements can be read and written a quad at a time.
inline bool quadAligned(const void *p, DType t) {
  bool floats = t == DType::F32 || t == DType::F16 || t == DType::BF16;
  return quadsEnabled() && floats &&
         reinterpret_cast<uintptr_t>(p) % (kQuad * (t == DType::F32 ? 4 : 2)) == 0;
}

/// Whether every operand (a View, or anything with `data` and `dtype`; one
/// with no data is left out) can be read a quad at a time.
template <typename Operand> bool quadsFit(std::initializer_list<Operand> operands) {
  for (const Operand &o : operands)
    if (o.data && !quadAligned(o.data, o.dtype))
      return false;
  return true;
}

/// f(Width<W>()) for W = width, 1 or kQuad: a pass's unit chosen at run time.
template <typename F> void withWidth(int width, F f) {
  if (width == kQuad)
    return f(Width<kQuad>());
  return f(Width<1>());
}

/// Calls f(std::integral_constant<DType, T>) for t among f32, f16, bf16.
template <typename F> __device__ void withFloatType(DType t, F f) {
  if (t == DType::F16)
    f(std::integral_constant<DType, DType::F16>());
  else if (t == DType::BF16)
    f(std::integral_constant<DType, DType::BF16>());
  else
    f(std::integral_constant<DType, DType::F32>());
}

template <DType T> __device__ void load4(const void *p, int64_t i, float *out) {
  if constexpr (T == DType::F32) {
    float4 q = *reinterpret_cast<const float4 *>(static_cast<const float *>(p) + i);
    out[0] = q.x, out[1] = q.y, out[2] = q.z, out[3] = q.w;
  } else {
    uint2 q = *reinterpret_cast<const uint2 *>(static_cast<const uint16_t *>(p) + i);
    uint16_t h[kQuad] = {uint16_t(q.x), uint16_t(q.x >> 16), uint16_t(q.y), uint16_t(q.y >> 16)};
#pragma unroll
    for (int e = 0; e < kQuad; ++e)
      out[e] = T == DType::F16 ? num::f16ToF32(h[e]) : num::bf16ToF32(h[e]);
  }
}

template <DType T> __device__ void store4(void *p, int64_t i, const float *in) {
  if constexpr (T == DType::F32) {
    *reinterpret_cast<float4 *>(static_cast<float *>(p) + i) = {in[0], in[1], in[2], in[3]};
  } else {
    uint32_t h[kQuad];
#pragma unroll
    for (int e = 0; e < kQuad; ++e)
      h[e] = T == DType::F16 ? num::f32ToF16(in[e]) : num::f32ToBf16(in[e]);
    *reinterpret_cast<uint2 *>(static_cast<uint16_t *>(p) + i) = {h[0] | h[1] << 16,
                                                                  h[2] | h[3] << 16};
  }
}

/// Elements i .. i + W - 1 as f32 (W 4: a quad-aligned float dtype).
template <int W> __device__ void loadUnit(const void *p, DType t, int64_t i, float *out) {
  if constexpr (W == kQuad)
    withFloatType(t, [&](auto type) { load4<decltype(type)::value>(p, i, out); });
  else
    out[0] = load(p, t, i);
}

/// Stores W values from element i on, each rounded as store() rounds it.
template <int W> __device__ void storeUnit(void *p, DType t, int64_t i, const float *in) {
  if constexpr (W == kQuad)
    withFloatType(t, [&](auto type) { store4<decltype(type)::value>(p, i, in); });
  else
    store(p, t, i, in[0]);
}

/// The elements [begin, end) that this thread takes, in units: where
/// `quads`, the unit q holds elements 4q .. 4q + 3 and the thread takes units
/// begin / 4 + first, + step, ...; the last (end - begin) % 4 elements, and
/// every element without quads, are units of one taken the same way. For each
/// unit, load(Width<W>, i) before store(Width<W>, i, loaded), kQuadUnroll
/// quads or kUnroll single elements at a time (unrolledStride). begin is a
/// multiple of 4.
template <int QuadUnroll = kQuadUnroll, typename Load, typename Store>
__device__ void quadStride(int64_t begin, int64_t end, int64_t first, int64_t step, bool quads,
                           Load load, Store store) {
  int64_t split = begin;
  if (quads) {
    split = begin + (end - begin) / kQuad * kQuad;
    unrolledStride<QuadUnroll>(
        begin / kQuad + first, split / kQuad, step,
        [&](int64_t q) { return load(Width<kQuad>(), q * kQuad); },
        [&](int64_t q, const auto &v) { store(Width<kQuad>(), q * kQuad, v); });
  }
  unrolledStride(
      split + first, end, step, [&](int64_t i) { return load(Width<1>(), i); },
      [&](int64_t i, const auto &v) { store(Width<1>(), i, v); });
}

/// quadStride over [0, n), a grid-stride pass.
template <int QuadUnroll = kQuadUnroll, typename Load, typename Store>
__device__ void quadElements(int64_t n, bool quads, Load load, Store store) {
  quadStride<QuadUnroll>(0, n, blockIdx.x * (int64_t)blockDim.x + threadIdx.x,
                         (int64_t)gridDim.x * blockDim.x, quads, load, store);
}

/// Blocks for quadElements over n elements.
inline unsigned blocksForQuads(int64_t n, bool quads) {
  if (!quads)
    return blocksForUnrolled(n);
  return blocksFor((n + kQuad * kQuadUnroll - 1) / (kQuad * kQuadUnroll));
}

/// W values of f32, the unit a pass loads of one operand.
template <int W> struct Floats { float v[W]; };

/// Elements i .. i + W - 1 of a `t` tensor at p, as f32.
template <int W> __device__ Floats<W> loadFloats(const void *p, DType t, int64_t i) {
  Floats<W> f;
  loadUnit<W>(p, t, i, f.v);
  return f;
}

/// y[i] = f(x[i]) for every element, each stored as store() rounds it.
template <typename F> __device__ void quadMap(View x, View y, bool quads, F f) {
  quadElements(
      y.size, quads,
      [&](auto w, int64_t i) { return loadFloats<decltype(w)::value>(x.data, x.dtype, i); },
      [&](auto w, int64_t i, auto v) {
#pragma unroll
        for (int k = 0; k < decltype(w)::value; ++k)
          v.v[k] = f(v.v[k]);
        storeUnit<decltype(w)::value>(y.data, y.dtype, i, v.v);
      });
}

} // namespace ampc::rt::cuda

#endif
