#include "runtime/core/Convert.h"

#include <algorithm>
#include <cstring>
#include <immintrin.h>

namespace ampc::rt {

namespace {

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
  if (n == 0) // an empty tensor's pointers may be null
    return;
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
    for (size_t i = 0; i < n; ++i) {
      double v;
      std::memcpy(&v, static_cast<const char *>(src) + 8 * i, 8);
      dst[i] = narrow(v);
    }
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
  case DType::F8E4M3:
    for (size_t i = 0; i < n; ++i)
      dst[i] = num::e4m3ToF32(static_cast<const uint8_t *>(src)[i]);
    return;
  case DType::F8E5M2:
    for (size_t i = 0; i < n; ++i)
      dst[i] = num::e5m2ToF32(static_cast<const uint8_t *>(src)[i]);
    return;
  }
}

void fromF32(const float *src, void *dst, DType dtype, size_t n) {
  if (n == 0) // an empty tensor's pointers may be null
    return;
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
  case DType::F8E4M3:
    for (size_t i = 0; i < n; ++i)
      static_cast<uint8_t *>(dst)[i] = num::f32ToE4M3(src[i]);
    return;
  case DType::F8E5M2:
    for (size_t i = 0; i < n; ++i)
      static_cast<uint8_t *>(dst)[i] = num::f32ToE5M2(src[i]);
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

double loadElement(const void *data, DType dtype, int64_t i) {
  const char *at = static_cast<const char *>(data) + i * dtypeSize(dtype);
  switch (dtype) {
  case DType::F64: {
    double v;
    std::memcpy(&v, at, 8);
    return v;
  }
  case DType::I64: {
    int64_t v;
    std::memcpy(&v, at, 8);
    return (double)v;
  }
  case DType::I32: {
    int32_t v;
    std::memcpy(&v, at, 4);
    return v;
  }
  case DType::I1:
    return *at ? 1.0 : 0.0;
  default: {
    float v;
    toF32(at, dtype, &v, 1);
    return v;
  }
  }
}

void storeElement(void *data, DType dtype, int64_t i, double value) {
  char *at = static_cast<char *>(data) + i * dtypeSize(dtype);
  switch (dtype) {
  case DType::F64:
    std::memcpy(at, &value, 8);
    return;
  case DType::I64: {
    int64_t v = (int64_t)value;
    std::memcpy(at, &v, 8);
    return;
  }
  case DType::I32: {
    int32_t v = (int32_t)value;
    std::memcpy(at, &v, 4);
    return;
  }
  case DType::I1:
    *at = value != 0.0;
    return;
  case DType::F8E4M3: // from the exact value: one rounding
    *reinterpret_cast<uint8_t *>(at) = num::toFp8(value, num::kE4M3);
    return;
  case DType::F8E5M2:
    *reinterpret_cast<uint8_t *>(at) = num::toFp8(value, num::kE5M2);
    return;
  default: {
    float v = narrow(value);
    fromF32(&v, at, dtype, 1);
  }
  }
}

void convertElements(const void *src, DType from, void *dst, DType to, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    storeElement(dst, to, i, loadElement(src, from, i));
}

} // namespace ampc::rt
