// Element functions of the unary ops, each with its value and its derivative
// (as the backward reads it: from the input x and the forward's output y).
// The CPU kernels and the CUDA kernels call these, so both compute the same
// f32 expression. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_ACTIVATIONS_H
#define AMPC_RUNTIME_NUMERICS_ACTIVATIONS_H

#include <math.h>

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

struct Neg {
  AMPC_HD float value(float x) const { return -x; }
  AMPC_HD float derivative(float, float) const { return -1.0f; }
};

struct Abs {
  AMPC_HD float value(float x) const { return fabsf(x); }
  AMPC_HD float derivative(float x, float) const {
    return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
  }
};

struct Relu {
  /// NaN stays NaN.
  AMPC_HD float value(float x) const { return x > 0.0f || x != x ? x : 0.0f; }
  AMPC_HD float derivative(float x, float) const { return x > 0.0f ? 1.0f : 0.0f; }
};

struct Tanh {
  AMPC_HD float value(float x) const { return tanhf(x); }
  AMPC_HD float derivative(float, float y) const { return 1.0f - y * y; }
};

struct Sigmoid {
  AMPC_HD float value(float x) const { return 1.0f / (1.0f + expf(-x)); }
  AMPC_HD float derivative(float, float y) const { return y * (1.0f - y); }
};

struct Erf {
  AMPC_HD float value(float x) const { return erff(x); }
  /// 2/sqrt(pi) e^(-x^2).
  AMPC_HD float derivative(float x, float) const { return 1.12837917f * expf(-x * x); }
};

/// The erf form: x * Phi(x).
struct Gelu {
  AMPC_HD float value(float x) const { return 0.5f * x * (1.0f + erff(x * 0.70710678f)); }
  AMPC_HD float derivative(float x, float) const {
    float cdf = 0.5f * (1.0f + erff(x * 0.70710678f));
    return cdf + x * 0.39894228f * expf(-0.5f * x * x);
  }
};

/// The tanh approximation (`approximate = true`).
struct GeluTanh {
  AMPC_HD float value(float x) const {
    return 0.5f * x * (1.0f + tanhf(0.7978845608f * (x + 0.044715f * x * x * x)));
  }
  AMPC_HD float derivative(float x, float) const {
    float u = 0.7978845608f * (x + 0.044715f * x * x * x), t = tanhf(u);
    return 0.5f * (1.0f + t) +
           0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
  }
};

struct Exp {
  AMPC_HD float value(float x) const { return expf(x); }
  AMPC_HD float derivative(float, float y) const { return y; }
};

struct Log {
  AMPC_HD float value(float x) const { return logf(x); }
  AMPC_HD float derivative(float x, float) const { return 1.0f / x; }
};

/// Radians; the phase of a large argument is as exact as its f32 value
/// (rotary position embeddings compute theirs in f32 for this reason).
struct Sin {
  AMPC_HD float value(float x) const { return sinf(x); }
  AMPC_HD float derivative(float x, float) const { return cosf(x); }
};

struct Cos {
  AMPC_HD float value(float x) const { return cosf(x); }
  AMPC_HD float derivative(float x, float) const { return -sinf(x); }
};

struct Sqrt {
  AMPC_HD float value(float x) const { return sqrtf(x); }
  AMPC_HD float derivative(float, float y) const { return 0.5f / y; }
};

struct Rsqrt {
  AMPC_HD float value(float x) const { return 1.0f / sqrtf(x); }
  AMPC_HD float derivative(float, float y) const { return -0.5f * y * y * y; }
};

struct Square {
  AMPC_HD float value(float x) const { return x * x; }
  AMPC_HD float derivative(float x, float) const { return 2.0f * x; }
};

struct Pow {
  float exponent;
  AMPC_HD float value(float x) const { return powf(x, exponent); }
  AMPC_HD float derivative(float x, float) const {
    return exponent * powf(x, exponent - 1.0f);
  }
};

/// x * scale + bias.
struct Scale {
  float scale, bias;
  AMPC_HD float value(float x) const { return x * scale + bias; }
  AMPC_HD float derivative(float, float) const { return scale; }
};

} // namespace ampc::num

#endif
