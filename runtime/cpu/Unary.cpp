// Elementwise kernels of one operand: math and activations through the
// functors of numerics/Activations.h, their backward (unary_backward), and
// dropout with counter-based random bits.
#include <cstring>

#include "runtime/cpu/KernelUtil.h"
#include "runtime/numerics/Activations.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt {
namespace {

/// y = f.value(x) for a functor of numerics/Activations.h.
template <typename F> void unary(KernelContext &c, F f) {
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  int64_t n = c.out[0].size();
  const float *px = x.data();
  float *py = y.data();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    py[i] = f.value(px[i]);
  y.commit();
}

/// dx = dy * f'(x, y) over all elements, in parallel, for a functor of
/// numerics/Activations.h.
template <typename F> void applyDerivative(KernelContext &c, F f) {
  F32In x(c.in[0]), y(c.in[1]), dy(c.in[2]);
  F32Out dx(c.out[0]);
  const float *px = x.data(), *py = y.data(), *pd = dy.data();
  float *out = dx.data();
  int64_t n = c.out[0].size();
  // simd: derivatives like relu's become vector selects instead of
  // data-dependent branches. Element i is read before it is written, so the
  // planner may give dx the memory of x, y or dy.
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = pd[i] * f.derivative(px[i], py[i]);
  dx.commit();
}

void unaryBackward(KernelContext &c) {
  // The function is resolved once; each gets its own loop.
  std::string fn = attrStr(c, "fn", "");
  float e = narrow(attrF64(c, "exponent", 1.0));
  if (fn == "relu")
    return applyDerivative(c, num::Relu{});
  if (fn == "tanh")
    return applyDerivative(c, num::Tanh{});
  if (fn == "sigmoid")
    return applyDerivative(c, num::Sigmoid{});
  if (fn == "erf")
    return applyDerivative(c, num::Erf{});
  if (fn == "abs")
    return applyDerivative(c, num::Abs{});
  if (fn == "exp")
    return applyDerivative(c, num::Exp{});
  if (fn == "log")
    return applyDerivative(c, num::Log{});
  if (fn == "sqrt")
    return applyDerivative(c, num::Sqrt{});
  if (fn == "rsqrt")
    return applyDerivative(c, num::Rsqrt{});
  if (fn == "square")
    return applyDerivative(c, num::Square{});
  if (fn == "pow")
    return applyDerivative(c, num::Pow{e});
  if (fn == "gelu")
    return applyDerivative(c, num::Gelu{});
  if (fn == "gelu_tanh")
    return applyDerivative(c, num::GeluTanh{});
  c.fail("unknown function '" + fn + "'");
}

void dropout(KernelContext &c) {
  double rate = attrF64(c, "rate", 0.5);
  if (!c.training || rate == 0.0) {
    copyBytes(c.in[0], c.out[0]);
    return;
  }
  // The plan's run counter is the last input (docs/runtime.md, "Counters").
  uint64_t iteration = 0;
  if (c.in.size() > 1)
    std::memcpy(&iteration, c.in.back().data, sizeof iteration);
  uint64_t stream = num::dropoutStream(c.seed, (uint64_t)attrInt(c, "seed", 0), iteration);
  float keep = 1.0f / float(1.0 - rate);
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  int64_t n = c.out[0].size();
  for (int64_t i = 0; i < n; ++i)
    y[i] = num::dropoutAt(x[i], stream, (uint64_t)i, rate, keep);
  y.commit();
}

} // namespace

void addUnaryKernels(KernelTable &t) {
  t[Kernel::Neg] = [](KernelContext &c) { unary(c, num::Neg{}); };
  t[Kernel::Abs] = [](KernelContext &c) { unary(c, num::Abs{}); };
  t[Kernel::Relu] = [](KernelContext &c) { unary(c, num::Relu{}); };
  t[Kernel::Tanh] = [](KernelContext &c) { unary(c, num::Tanh{}); };
  t[Kernel::Sigmoid] = [](KernelContext &c) { unary(c, num::Sigmoid{}); };
  t[Kernel::Erf] = [](KernelContext &c) { unary(c, num::Erf{}); };
  t[Kernel::Gelu] = [](KernelContext &c) {
    if (attrBool(c, "approximate", false))
      unary(c, num::GeluTanh{});
    else
      unary(c, num::Gelu{});
  };
  t[Kernel::Exp] = [](KernelContext &c) { unary(c, num::Exp{}); };
  t[Kernel::Log] = [](KernelContext &c) { unary(c, num::Log{}); };
  t[Kernel::Sqrt] = [](KernelContext &c) { unary(c, num::Sqrt{}); };
  t[Kernel::Rsqrt] = [](KernelContext &c) { unary(c, num::Rsqrt{}); };
  t[Kernel::Square] = [](KernelContext &c) { unary(c, num::Square{}); };
  t[Kernel::Pow] = [](KernelContext &c) { unary(c, num::Pow{narrow(attrF64(c, "exponent", 1.0))}); };
  t[Kernel::Scale] = [](KernelContext &c) {
    unary(c, num::Scale{narrow(attrF64(c, "scale", 1.0)), narrow(attrF64(c, "bias", 0.0))});
  };
  t[Kernel::Dropout] = dropout;
  t[Kernel::UnaryBackward] = unaryBackward;
}

} // namespace ampc::rt
