#include "runtime/Half.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

namespace ampc::rt {
namespace {

uint32_t bitsOf(float v) {
  uint32_t u;
  std::memcpy(&u, &v, 4);
  return u;
}

float floatOf(uint32_t u) {
  float v;
  std::memcpy(&v, &u, 4);
  return v;
}

bool hasF16c() {
  static const bool has = __builtin_cpu_supports("f16c") && __builtin_cpu_supports("avx");
  return has;
}

__attribute__((target("avx,f16c"))) void f16ToF32Fast(const uint16_t *src, float *dst,
                                                      size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + i))));
  for (; i < n; ++i)
    dst[i] = f16ToF32(src[i]);
}

__attribute__((target("avx,f16c"))) void f32ToF16Fast(const float *src, uint16_t *dst,
                                                      size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128((__m128i *)(dst + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT));
  for (; i < n; ++i)
    dst[i] = f32ToF16(src[i]);
}

} // namespace

uint16_t f32ToF16(float value) {
  uint32_t f = bitsOf(value);
  uint16_t sign = (f >> 16) & 0x8000u;
  f &= 0x7FFFFFFFu;
  if (f >= 0x7F800000u) // inf, or NaN made quiet
    return sign | (f > 0x7F800000u ? 0x7E00u | ((f >> 13) & 0x3FFu) : 0x7C00u);
  if (f >= 0x477FF000u) // 65520 and above round to inf
    return sign | 0x7C00u;
  if (f < 0x38800000u) { // below 2^-14: f16 subnormal or zero
    if (f < 0x33000000u) // below 2^-25: rounds to zero
      return sign;
    uint32_t exponent = f >> 23, mantissa = (f & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (f >> 13) - (112u << 10), rest = f & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // a carry into the exponent is the right result
  return sign | half;
}

float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1Fu,
           mantissa = h & 0x3FFu;
  if (exponent == 0) {
    float v = mantissa * 5.9604644775390625e-08f; // mantissa * 2^-24, exact
    return sign ? -v : v;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7F800000u | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32ToBf16(float value) {
  uint32_t f = bitsOf(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u)
    return (f >> 16) | 0x40u; // quiet NaN
  f += 0x7FFFu + ((f >> 16) & 1u);
  return f >> 16;
}

float bf16ToF32(uint16_t b) { return floatOf(uint32_t(b) << 16); }

/// Splits a large conversion over the OpenMP threads.
template <typename F> bool inParallel(size_t n, F convert) {
  constexpr size_t kChunk = 1 << 16;
  if (n < 4 * kChunk)
    return false;
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for
  for (int64_t c = 0; c < chunks; ++c)
    convert(c * kChunk, std::min(kChunk, n - c * kChunk));
  return true;
}

void toF32(const void *src, DType dtype, float *dst, size_t n) {
  if (dtype != DType::F32 &&
      inParallel(n, [&](size_t at, size_t count) {
        toF32(static_cast<const char *>(src) + at * dtypeSize(dtype), dtype, dst + at, count);
      }))
    return;
  switch (dtype) {
  case DType::F32:
    std::memcpy(dst, src, n * 4);
    return;
  case DType::F16:
    if (hasF16c())
      return f16ToF32Fast(static_cast<const uint16_t *>(src), dst, n);
    for (size_t i = 0; i < n; ++i)
      dst[i] = f16ToF32(static_cast<const uint16_t *>(src)[i]);
    return;
  case DType::BF16:
    for (size_t i = 0; i < n; ++i)
      dst[i] = bf16ToF32(static_cast<const uint16_t *>(src)[i]);
    return;
  case DType::F64:
    for (size_t i = 0; i < n; ++i)
      dst[i] = static_cast<const double *>(src)[i];
    return;
  case DType::I32:
    for (size_t i = 0; i < n; ++i)
      dst[i] = static_cast<const int32_t *>(src)[i];
    return;
  case DType::I64:
    for (size_t i = 0; i < n; ++i)
      dst[i] = static_cast<const int64_t *>(src)[i];
    return;
  case DType::I1:
    for (size_t i = 0; i < n; ++i)
      dst[i] = static_cast<const uint8_t *>(src)[i] ? 1.0f : 0.0f;
    return;
  }
}

void fromF32(const float *src, void *dst, DType dtype, size_t n) {
  if (dtype != DType::F32 &&
      inParallel(n, [&](size_t at, size_t count) {
        fromF32(src + at, static_cast<char *>(dst) + at * dtypeSize(dtype), dtype, count);
      }))
    return;
  switch (dtype) {
  case DType::F32:
    std::memcpy(dst, src, n * 4);
    return;
  case DType::F16:
    if (hasF16c())
      return f32ToF16Fast(src, static_cast<uint16_t *>(dst), n);
    for (size_t i = 0; i < n; ++i)
      static_cast<uint16_t *>(dst)[i] = f32ToF16(src[i]);
    return;
  case DType::BF16:
    for (size_t i = 0; i < n; ++i)
      static_cast<uint16_t *>(dst)[i] = f32ToBf16(src[i]);
    return;
  case DType::F64:
    for (size_t i = 0; i < n; ++i)
      static_cast<double *>(dst)[i] = src[i];
    return;
  case DType::I32:
    for (size_t i = 0; i < n; ++i)
      static_cast<int32_t *>(dst)[i] = static_cast<int32_t>(src[i]);
    return;
  case DType::I64:
    for (size_t i = 0; i < n; ++i)
      static_cast<int64_t *>(dst)[i] = static_cast<int64_t>(src[i]);
    return;
  case DType::I1:
    for (size_t i = 0; i < n; ++i)
      static_cast<uint8_t *>(dst)[i] = src[i] != 0.0f;
    return;
  }
}

void roundThrough(const float *src, DType dtype, float *dst, size_t n) {
  constexpr size_t kChunk = 4096; // the narrow copy stays in L1
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > (1 << 15))
  for (int64_t c = 0; c < chunks; ++c) {
    size_t at = c * kChunk, count = std::min(kChunk, n - at);
    uint16_t narrow[kChunk];
    fromF32(src + at, narrow, dtype, count);
    toF32(narrow, dtype, dst + at, count);
  }
}

} // namespace ampc::rt
