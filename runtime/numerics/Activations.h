// Element functions of the unary ops, each with its value and its derivative
// (as the backward reads it: from the input x and the forward's output y).
// The CPU kernels and the CUDA kernels call these, so both compute the same
// f32 expression. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_ACTIVATIONS_H
#define AMPC_RUNTIME_NUMERICS_ACTIVATIONS_H

#include <math.h>

#include "runtime/numerics/Erf.h"
#include "runtime/numerics/Exp.h"
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

/// 1 / (1 + e^-x) on vectorExp; 0 below -87.34, where the true value is
/// under f32's smallest normal (as vectorExp's own flush).
struct Sigmoid {
  AMPC_HD float value(float x) const {
    return x < -87.33654f ? 0.0f : 1.0f / (1.0f + vectorExp(-x));
  }
  AMPC_HD float derivative(float, float y) const { return y * (1.0f - y); }
};

struct Erf {
  AMPC_HD float value(float x) const { return vectorErf(x); }
  /// 2/sqrt(pi) e^(-x^2).
  AMPC_HD float derivative(float x, float) const {
    return 1.12837917f * splitGaussian(tailArgument(x), 1.0f).value();
  }
};

/// The erf form: x * Phi(x), Phi from its tail (numerics/Erf.h), so that
/// left of 0 the result keeps its relative accuracy.
struct Gelu {
  AMPC_HD float value(float x) const { return x * normalAt(x).cdf; }
  AMPC_HD float derivative(float x, float) const {
    NormalAt n = normalAt(x);
    return n.cdf + x * n.density;
  }
};

/// The tanh approximation (`approximate = true`), as x * s with
/// s = (1 + tanh u) / 2 = 1 / (1 + e^(-2u)): no cancellation left of 0,
/// and vectorExp instead of tanhf. s is 0 where e^(-2u) would pass f32's
/// range (the true s is below its smallest normal there).
struct GeluTanh {
  struct Parts {
    float s, e; // s and e^(-2u)
  };
  AMPC_HD static Parts parts(float x) {
    float u2 = -1.5957691216f * (x + 0.044715f * x * x * x);
    float e = vectorExp(u2);
    return {u2 > 87.33654f ? 0.0f : 1.0f / (1.0f + e), e};
  }
  AMPC_HD float value(float x) const { return x * parts(x).s; }
  /// s + x s (1 - s) 2 u', with 1 - s = e s.
  AMPC_HD float derivative(float x, float) const {
    Parts p = parts(x);
    return p.s + x * (p.e * p.s * p.s) * 1.5957691216f * (1.0f + 0.134145f * x * x);
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
