// erf, erfc and the normal distribution's CDF in f32, written so that loops
// over them vectorise (glibc's erff is a call per element; GELU spent more
// of a CPU step in it than in anything but the GEMMs). Only adds,
// multiplies, one division, selects and vectorExp, so the CPU at any vector
// width and the GPU (built with --fmad=false) compute the same bits.
//
// erfc(z) = t e^(-z^2 + P(t)), t = 1 / (1 + z/2), z >= 0: Numerical
// Recipes' form of erfc, P refitted here (degree 9 in t - 1/2, relative
// error 5e-8 over z in [0, 10.5]). The square in the exponent is split,
// z = h + (z - h) with h's 12 high bits, so -h^2 is exact and the rest
// joins exp's reduced argument (vectorExpSplit): the result keeps its
// relative accuracy far into the tail, where 1 + erf would cancel. Near 0,
// erf is its Taylor series (and Phi 1/2 + erf/2). docs/runtime.md,
// "Element functions", gives the bounds the tests hold them to.
#ifndef AMPC_RUNTIME_NUMERICS_ERF_H
#define AMPC_RUNTIME_NUMERICS_ERF_H

#include <math.h>

#include "runtime/numerics/Exp.h"
#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

/// The exponent of e^(-k a^2) (k = 1 or 1/2) as an exact hi and a small lo.
struct SplitGaussian {
  float hi, lo;
  AMPC_HD float value() const { return vectorExpSplit(hi, lo); }
};

AMPC_HD SplitGaussian splitGaussian(float a, float k) {
  float h = floatOf(bitsOf(a) & 0xFFFFF000u); // 12 significant bits: h * h is exact
  return {-k * (h * h), -k * ((a - h) * (a + h))};
}

/// erfc(s * a) for a >= 0 (or NaN), where k = s^2 is 1 or 1/2; `gaussian`
/// is e^(-k a^2). Past a = 16 the result is 0 (below f32's normal range).
AMPC_HD float erfcScaled(float a, float s, const SplitGaussian &gaussian) {
  float t = 1.0f / (1.0f + 0.5f * (s * a));
  float u = t - 0.5f;
  float p = 0.14572403f;
  p = p * u - 0.029653386f;
  p = p * u - 0.26188308f;
  p = p * u + 0.10837536f;
  p = p * u + 0.2792921f;
  p = p * u - 0.15761967f;
  p = p * u - 0.37506218f;
  p = p * u + 0.18936523f;
  p = p * u + 1.3452855f;
  p = p * u - 0.67179406f;
  return t * vectorExpSplit(gaussian.hi, gaussian.lo + p);
}

/// Clamps a >= 0 to 16, where every tail here is 0 already; NaN stays NaN.
AMPC_HD float tailArgument(float x) {
  float a = fabsf(x);
  return a > 16.0f ? 16.0f : a;
}

/// erf(x) for |x| < 1/2 by its Taylor series, to x^13, as x + x * q(x^2)
/// (rounded once at the end).
AMPC_HD float erfSeries(float x) {
  float w = x * x;
  float q = 1.2055333e-4f;
  q = q * w - 8.5483270e-4f;
  q = q * w + 5.2239776e-3f;
  q = q * w - 2.6866171e-2f;
  q = q * w + 1.1283792e-1f;
  q = q * w - 3.7612639e-1f;
  q = q * w + 0.12837917f; // 2/sqrt(pi) - 1
  return x + x * q;
}

/// erf(x): the series below |x| = 1/2, 1 - erfc(|x|) above.
AMPC_HD float vectorErf(float x) {
  float a = tailArgument(x);
  float far = 1.0f - erfcScaled(a, 1.0f, splitGaussian(a, 1.0f));
  return fabsf(x) < 0.5f ? erfSeries(x) : (x < 0.0f ? -far : far);
}

/// The standard normal CDF Phi(x) and its density, from one tail.
struct NormalAt {
  float cdf, density;
};

AMPC_HD NormalAt normalAt(float x) {
  float a = tailArgument(x);
  SplitGaussian g = splitGaussian(a, 0.5f);
  float lower = 0.5f * erfcScaled(a, 0.70710678f, g); // Phi(-|x|)
  float central = 0.5f + 0.5f * erfSeries(x * 0.70710678f);
  float cdf = a < 0.70710678f ? central : (x < 0.0f ? lower : 1.0f - lower);
  return {cdf, 0.39894228f * g.value()};
}

} // namespace ampc::num

#endif
