// Elementwise kernels of one operand: math and activations through the
// functors of numerics/ElementFns.h (each kernel's function decoded by
// unaryCallOf), their backward (unary_backward), and
// dropout with counter-based random bits.
#include <cstring>

#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/core/StepVariants.h"
#include "runtime/numerics/ElementFns.h"
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

void unaryKernel(KernelContext &c) {
  withFunctor(unaryCallOf(c.step, c.attrs), [&](auto f) { unary(c, f); });
}

void unaryBackward(KernelContext &c) {
  withFunctor(unaryCallOf(c.step, c.attrs), [&](auto f) { applyDerivative(c, f); });
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
  t.addEach(isUnaryKernel, unaryKernel);
  t[Kernel::Dropout] = dropout;
  t[Kernel::UnaryBackward] = unaryBackward;
}

} // namespace ampc::rt
