// The dynamic loss-scaling rule (Paddle's update_loss_scaling; see
// docs/training.md, "Loss scaling") on the scale and its two counters, kept as
// f32 scalars. Host and device code: the CUDA backend runs it in a kernel, so
// no step waits for the host.
#ifndef AMPC_RUNTIME_NUMERICS_LOSSSCALE_H
#define AMPC_RUNTIME_NUMERICS_LOSSSCALE_H

#include "runtime/numerics/Finite.h"

namespace ampc::num {

struct LossScaleRule {
  int64_t incrEveryNSteps = 2000, decrEveryNNanOrInf = 1;
  double incrRatio = 2.0, decrRatio = 0.5;
  bool dynamic = true;
};

struct LossScaleState {
  float scale, good, bad;
};

/// If `foundInf`: good := 0, bad += 1, and when bad reaches
/// decrEveryNNanOrInf, scale := max(scale * decrRatio, 1), bad := 0. Else:
/// bad := 0, good += 1, and when good reaches incrEveryNSteps, scale :=
/// scale * incrRatio if that is finite in f32, good := 0. A static rule
/// (dynamic false) counts but keeps the scale.
AMPC_HD void updateLossScale(bool foundInf, LossScaleState &state, const LossScaleRule &rule) {
  double s = state.scale;
  int64_t good = (int64_t)state.good, bad = (int64_t)state.bad;
  if (foundInf) {
    good = 0;
    if (++bad >= rule.decrEveryNNanOrInf) {
      if (rule.dynamic) {
        double shrunk = s * rule.decrRatio;
        s = shrunk < 1.0 ? 1.0 : shrunk;
      }
      bad = 0;
    }
  } else {
    bad = 0;
    if (++good >= rule.incrEveryNSteps) {
      double grown = s * rule.incrRatio;
      if (rule.dynamic && !isNonFiniteF32((float)grown))
        s = grown;
      good = 0;
    }
  }
  state = {(float)s, (float)good, (float)bad};
}

} // namespace ampc::num

#endif
