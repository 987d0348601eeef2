// The optimizer updates of one element, in f32 with the f64 steps Adam's
// moments and bias correction take. `g` is the (unscaled) gradient. The CPU
// kernels and the CUDA kernels call these (docs/training.md, "Optimizers").
// Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_OPTIMIZERS_H
#define AMPC_RUNTIME_NUMERICS_OPTIMIZERS_H

#include <math.h>

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

/// L2 weight decay as PyTorch's optimizers apply it: the gradient plus
/// decay times the param, in f32.
AMPC_HD float withL2(float g, float p, float decay) { return decay != 0.0f ? g + decay * p : g; }

/// p -= lr * (g + decay * p).
struct SgdUpdate {
  float lr, decay = 0;
  AMPC_HD void operator()(float &p, float g) const { p -= lr * withL2(g, p, decay); }
};

/// g += decay * p; v = momentum * v + g; p -= lr * v, or with Nesterov
/// p -= lr * (g + momentum * v) (PyTorch's SGD, no dampening).
struct MomentumUpdate {
  float lr, momentum, decay = 0;
  bool nesterov = false;
  AMPC_HD void operator()(float &p, float g, float &v) const {
    g = withL2(g, p, decay);
    v = momentum * v + g;
    p -= lr * (nesterov ? g + momentum * v : v);
  }
};

/// Adam: with `decoupled` (AdamW) p -= lr * decay * p first, else L2 decay
/// added to the gradient (PyTorch's Adam).
struct AdamUpdate {
  float lr;
  double beta1, beta2, epsilon, weightDecay;
  double correction1, correction2; // 1 - beta^t
  bool decoupled; // set by at(): no initializer, so that a __shared__ one may hold it

  /// The update of applied step `step` (counted from 1; below 1 counts as 1).
  AMPC_HD static AdamUpdate at(float lr, double beta1, double beta2, double epsilon,
                               double weightDecay, double step, bool decoupled = true) {
    double t = 1.0 < step ? step : 1.0;
    return {lr,         beta1, beta2, epsilon, weightDecay, 1.0 - pow(beta1, t),
            1.0 - pow(beta2, t), decoupled};
  }

  AMPC_HD void operator()(float &p, float g, float &m, float &v) const {
    if (!decoupled)
      g = withL2(g, p, (float)weightDecay);
    else if (weightDecay != 0.0)
      p -= float(lr * weightDecay * p);
    m = float(beta1 * m + (1 - beta1) * g);
    v = float(beta2 * v + (1 - beta2) * double(g) * g);
    p -= float(lr * (m / correction1) / (sqrt(v / correction2) + epsilon));
  }
};

/// LAMB (You et al., 2019, as NVIDIA's FusedLAMB and TensorFlow Addons'
/// LAMB compute it): Adam's moments and bias correction, the direction
/// u = m_hat / (sqrt(v_hat) + epsilon) + decay * p, and p -= lr * r * u with
/// the trust ratio r = ||p|| / ||u|| over the tensor (1 where a norm is 0,
/// or without `adapt`). A kernel runs moments() and sums p^2 and u^2 over the
/// tensor in f64, then apply() recomputes u from the stored moments (the
/// same bits) and steps.
struct LambUpdate {
  float lr;
  double beta1, beta2, epsilon, weightDecay;
  double correction1, correction2; // 1 - beta^t
  bool adapt; // set by at(), as AdamUpdate's `decoupled`

  /// The update of applied step `step` (counted from 1; below 1 counts as 1).
  AMPC_HD static LambUpdate at(float lr, double beta1, double beta2, double epsilon,
                               double weightDecay, double step, bool adapt) {
    double t = 1.0 < step ? step : 1.0;
    return {lr,         beta1, beta2, epsilon, weightDecay, 1.0 - pow(beta1, t),
            1.0 - pow(beta2, t), adapt};
  }

  /// Updates the moments from gradient g; returns the direction u.
  AMPC_HD float moments(float p, float g, float &m, float &v) const {
    m = float(beta1 * m + (1 - beta1) * g);
    v = float(beta2 * v + (1 - beta2) * double(g) * g);
    return direction(p, m, v);
  }

  AMPC_HD float direction(float p, float m, float v) const {
    return float((m / correction1) / (sqrt(v / correction2) + epsilon) + weightDecay * p);
  }

  /// r from the tensor's sums of p^2 and u^2.
  AMPC_HD double trustRatio(double paramSquares, double directionSquares) const {
    return adapt && paramSquares > 0 && directionSquares > 0
               ? sqrt(paramSquares) / sqrt(directionSquares)
               : 1.0;
  }

  AMPC_HD void apply(float &p, float m, float v, double ratio) const {
    p -= float(lr * ratio * direction(p, m, v));
  }
};

/// Lion (Chen et al., 2023): decoupled decay p -= lr * decay * p first, then
/// p -= lr * sign(beta1 * m + (1 - beta1) * g) (sign 0 at 0) and
/// m = beta2 * m + (1 - beta2) * g, the moments in f64 rounded once, as
/// Adam's. The step is +-lr or 0: nothing but the decay and the subtraction
/// rounds the param.
struct LionUpdate {
  float lr;
  double beta1, beta2, weightDecay;

  AMPC_HD void operator()(float &p, float g, float &m) const {
    if (weightDecay != 0.0)
      p -= float(lr * weightDecay * p);
    double c = beta1 * m + (1 - beta1) * g;
    // A select, not a branch, so that the CPU's loop vectorises: p - 0 is
    // p (-0 included), and a NaN c steps as a negative one.
    float sign = c > 0.0 ? 1.0f : c == 0.0 ? 0.0f : -1.0f;
    p -= sign * lr;
    m = float(beta2 * m + (1 - beta2) * g);
  }
};

/// RMSprop as PyTorch's: L2 decay added to the gradient; v = alpha * v +
/// (1 - alpha) * g^2; `centered`, a = alpha * a + (1 - alpha) * g and the
/// denominator sqrt(v - a^2) + epsilon (v - a^2 held at 0 where rounding
/// takes it below, where PyTorch's gives NaN), else sqrt(v) + epsilon; with
/// momentum above 0, b = momentum * b + g / denominator and p -= lr * b,
/// else p -= lr * g / denominator. The states and the step in f64, each
/// rounded once. `buffer` and `average` are not touched where the update
/// has no such state (a caller may pass any float).
struct RmspropUpdate {
  float lr, decay;
  double alpha, epsilon, momentum;
  bool centered;

  AMPC_HD void operator()(float &p, float g, float &v, float &buffer, float &average) const {
    g = withL2(g, p, decay);
    v = float(alpha * v + (1 - alpha) * double(g) * g);
    double square = v;
    if (centered) {
      average = float(alpha * average + (1 - alpha) * g);
      square -= double(average) * average;
      if (square < 0.0)
        square = 0.0;
    }
    double step = g / (sqrt(square) + epsilon);
    if (momentum > 0.0) {
      buffer = float(momentum * buffer + step);
      step = buffer;
    }
    p -= float(lr * step);
  }
};

/// Adagrad as PyTorch's (without lr_decay, which a schedule gives): L2
/// decay added to the gradient; sum += g^2; p -= lr * g / (sqrt(sum) +
/// epsilon), the sum and the step in f64, each rounded once.
struct AdagradUpdate {
  float lr, decay;
  double epsilon;

  AMPC_HD void operator()(float &p, float g, float &sum) const {
    g = withL2(g, p, decay);
    sum = float(sum + double(g) * g);
    p -= float(lr * (g / (sqrt(double(sum)) + epsilon)));
  }
};

/// One element of an exponential moving average (docs/training.md, "Weight
/// averaging (EMA)"): average := lerp(average, value, 1 - d) in f32, by
/// PyTorch's two-sided lerp (exact at both ends).
struct EmaUpdate {
  float weight; // 1 - d

  /// The update of applied step `step` (counted from 1): d = decay, or with
  /// `warmup` min(decay, (1 + step) / (10 + step)).
  AMPC_HD static EmaUpdate at(double decay, bool warmup, double step) {
    double d = decay;
    if (warmup && (1.0 + step) / (10.0 + step) < d)
      d = (1.0 + step) / (10.0 + step);
    return {float(1.0 - d)};
  }

  AMPC_HD void operator()(float &average, float value) const {
    float diff = value - average;
    average = weight < 0.5f ? average + weight * diff : value - diff * (1.0f - weight);
  }
};

} // namespace ampc::num

#endif
