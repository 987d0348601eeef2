// exp in f32 written so that loops over it vectorise (glibc's expf does not
// without -ffast-math): Cody-Waite range reduction and Cephes' polynomial,
// within 2 ulp of the true value on [-87.3, 88.3]. Below, where the true
// value is under f32's smallest normal, the result is 0 (no subnormal
// results; a masked score, x - max near -30000, gets a probability of
// exactly 0, as in f64); above, exp(88.37). The softmax and cross-entropy
// kernels call it on x - max <= 0. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_EXP_H
#define AMPC_RUNTIME_NUMERICS_EXP_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

/// e^(hi + lo) for an exact `hi` and a `lo` of up to a few units, which
/// joins the reduced argument unrounded by hi: exp(-x^2) keeps its accuracy
/// (numerics/Erf.h). The range tests read hi + lo rounded. With lo = 0 this
/// is vectorExp, bit for bit.
AMPC_HD float vectorExpSplit(float hi, float lo) {
  float x = hi + lo;
  bool flushed = x < -87.33654f; // false for a NaN, which stays NaN
  bool clamped = x > 88.37626f;  // 2^127 at most: finite
  hi = flushed ? -87.33654f : (clamped ? 88.37626f : hi);
  lo = flushed || clamped ? 0.0f : lo;
  x = hi + lo;
  // n = round(x / ln 2) by the 1.5 * 2^23 trick (exact for |n| < 2^22);
  // a NaN x gets n = 0 (a defined conversion) and stays NaN through r.
  float t = x * 1.44269504f;
  float n = ((t == t ? t : 0.0f) + 12582912.0f) - 12582912.0f;
  float r = hi - n * 0.693359375f + n * 2.12194440e-4f + lo;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  float y = p * floatOf(uint32_t(int32_t(n) + 127) << 23); // p * 2^n
  return flushed ? 0.0f : y;
}

AMPC_HD float vectorExp(float x) { return vectorExpSplit(x, 0.0f); }

} // namespace ampc::num

#endif
