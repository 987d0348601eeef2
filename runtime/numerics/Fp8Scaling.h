// Delayed scaling of FP8 operands (docs/runtime.md, "FP8 scaling"):
// Transformer Engine's DelayedScaling recipe. Each scaled tensor keeps the
// amaxes (largest magnitudes) of its last N steps, newest first, and a
// scale; a step quantizes with the scale the previous steps made, records
// its amax, and then sets the scale for the next:
//   amax  = max over the history (NaN if one is NaN), or the newest
//   scale = (fp8_max / amax) / 2^margin, in f32,
// kept as it was where amax is 0 or not finite (TE's rule), or where the
// new scale would not be finite (an amax below fp8_max / f32's largest; TE
// would store inf). scale_inv = 1 / scale, in f32, is what GEMMs multiply
// by. Host and device code: the CUDA backend updates on the device.
#ifndef AMPC_RUNTIME_NUMERICS_FP8SCALING_H
#define AMPC_RUNTIME_NUMERICS_FP8SCALING_H

#include "runtime/numerics/Finite.h"

namespace ampc::num {

struct DelayedScalingRule {
  float fp8Max = 448.0f; // E4M3's largest; E5M2's is 57344
  int margin = 0;
  bool mostRecent = false; // amax_compute_algo: max (false) or most_recent
};

/// history := [amax, history[0 .. n-2]]: the oldest amax drops out.
AMPC_HD void pushAmax(float *history, int64_t n, float amax) {
  for (int64_t i = n - 1; i > 0; --i)
    history[i] = history[i - 1];
  if (n > 0)
    history[0] = amax;
}

/// The amax the next scale is made from.
AMPC_HD float historyAmax(const float *history, int64_t n, bool mostRecent) {
  if (mostRecent || n == 1)
    return history[0];
  float m = history[0];
  for (int64_t i = 1; i < n; ++i)
    m = (m != m || history[i] != history[i]) ? history[i] + m : (history[i] > m ? history[i] : m);
  return m;
}

/// The scale after a step whose history gives `amax`.
AMPC_HD float delayedScale(float amax, float scale, const DelayedScalingRule &rule) {
  if (!(amax > 0.0f) || isNonFiniteF32(amax))
    return scale;
  // One division by 2^margin (0 <= margin <= 127, exact in f32), as TE's.
  float next = (rule.fp8Max / amax) / floatOf(uint32_t(127 + rule.margin) << 23);
  return isNonFiniteF32(next) ? scale : next;
}

/// The rule of an fp8_scale_update step's attributes.
inline DelayedScalingRule delayedScalingRule(double fp8Max, int64_t margin,
                                             bool mostRecent) {
  return {float(fp8Max), int(margin), mostRecent};
}

/// One step's update of a scaled tensor's state, in place.
AMPC_HD void updateDelayedScaling(float *history, int64_t n, float amax, float &scale,
                                  float &scaleInv, const DelayedScalingRule &rule) {
  pushAmax(history, n, amax);
  scale = delayedScale(historyAmax(history, n, rule.mostRecent), scale, rule);
  scaleInv = 1.0f / scale;
}

} // namespace ampc::num

#endif
