// exp in f32 written so that loops over it vectorise (glibc's expf does not
// without -ffast-math): Cody-Waite range reduction and Cephes' polynomial,
// within 2 ulp of the true value on [-87.3, 88.3]; inputs are clamped to that
// range (below, no subnormal results; above, exp(88.37)). The kernels call it
// on x - max <= 0.
#ifndef AMPC_RUNTIME_KERNELS_EXP_H
#define AMPC_RUNTIME_KERNELS_EXP_H

#include <cstdint>

namespace ampc::rt {

inline float vectorExp(float x) {
  x = x < -87.33654f ? -87.33654f : x;
  x = x > 88.37626f ? 88.37626f : x; // 2^127 at most: finite
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (exact for |n| < 2^22);
  // a NaN x gets n = 0 (a defined conversion) and stays NaN through r.
  float t = x * 1.44269504f;
  float n = ((t == t ? t : 0.0f) + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  union {
    uint32_t bits;
    float value;
  } scale = {uint32_t(int32_t(n) + 127) << 23}; // 2^n
  return p * scale.value;
}

/// e[k] = exp(x[k] - max) over a row, with max the row's largest element;
/// returns the sum of e (in double) and sets `max`.
inline double expShiftedRow(const float *x, int64_t n, float *e, float &max) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int64_t k = 1; k < n; ++k)
    m = x[k] > m ? x[k] : m;
  max = m;
#pragma omp simd
  for (int64_t k = 0; k < n; ++k)
    e[k] = vectorExp(x[k] - m);
  double sum = 0; // in lanes: the order is fixed by the build, not the data
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < n; ++k)
    sum += e[k];
  return sum;
}

} // namespace ampc::rt

#endif
