// The optimizer updates of one element, in f32 with the f64 steps Adam's
// moments and bias correction take. `g` is the (unscaled) gradient. The CPU
// kernels and the CUDA kernels call these (docs/training.md, "Optimizers").
// Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_OPTIMIZERS_H
#define AMPC_RUNTIME_NUMERICS_OPTIMIZERS_H

#include <math.h>

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

struct SgdUpdate {
  float lr;
  AMPC_HD void operator()(float &p, float g) const { p -= lr * g; }
};

/// v = momentum * v + g; p -= lr * v.
struct MomentumUpdate {
  float lr, momentum;
  AMPC_HD void operator()(float &p, float g, float &v) const {
    v = momentum * v + g;
    p -= lr * v;
  }
};

/// Adam with decoupled weight decay (AdamW when weightDecay > 0).
struct AdamUpdate {
  float lr;
  double beta1, beta2, epsilon, weightDecay;
  double correction1, correction2; // 1 - beta^t

  /// The update of applied step `step` (counted from 1; below 1 counts as 1).
  AMPC_HD static AdamUpdate at(float lr, double beta1, double beta2, double epsilon,
                               double weightDecay, double step) {
    double t = 1.0 < step ? step : 1.0;
    return {lr, beta1, beta2, epsilon, weightDecay, 1.0 - pow(beta1, t), 1.0 - pow(beta2, t)};
  }

  AMPC_HD void operator()(float &p, float g, float &m, float &v) const {
    if (weightDecay != 0.0)
      p -= float(lr * weightDecay * p);
    m = float(beta1 * m + (1 - beta1) * g);
    v = float(beta2 * v + (1 - beta2) * double(g) * g);
    p -= float(lr * (m / correction1) / (sqrt(v / correction2) + epsilon));
  }
};

} // namespace ampc::num

#endif
