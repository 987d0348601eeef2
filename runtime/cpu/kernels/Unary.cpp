// Elementwise kernels of one operand: math and activations through the
// functors of numerics/ElementFns.h (each kernel's function decoded by
// unaryCallOf), their backward (unary_backward), and
// dropout with counter-based random bits.
#include <cstring>

#include "runtime/cpu/kernels/F32Chunks.h"
#include "runtime/core/StepVariants.h"
#include "runtime/numerics/ElementFns.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt {
namespace {

/// y[i] = f.value(x[i]) for a functor of numerics/Activations.h. simd: the
/// planner may give y the memory of x (element i is read before it is
/// written), which would send GCC's alias check to the scalar loop.
template <typename F> AMPC_VECTOR_CLONES void valuesOf(F f, const float *x, float *y, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    y[i] = f.value(x[i]);
}

/// dx[i] = dy[i] * f'(x[i], y[i]). simd: derivatives like relu's become
/// vector selects instead of data-dependent branches. Element i is read
/// before it is written, so the planner may give dx the memory of x, y or dy.
template <typename F>
AMPC_VECTOR_CLONES void derivativesOf(F f, const float *x, const float *y, const float *dy,
                                      float *dx, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    dx[i] = dy[i] * f.derivative(x[i], y[i]);
}

template <typename F> void unary(KernelContext &c, F f) {
  forF32Chunks<1>({F32Source{&c.in[0]}}, c.out[0], [&](const float *const *in, float *y, int64_t,
                                                        int64_t n) { valuesOf(f, in[0], y, n); });
}

template <typename F> void applyDerivative(KernelContext &c, F f) {
  forF32Chunks<3>({F32Source{&c.in[0]}, F32Source{&c.in[1]}, F32Source{&c.in[2]}}, c.out[0],
                  [&](const float *const *in, float *dx, int64_t, int64_t n) {
                    derivativesOf(f, in[0], in[1], in[2], dx, n);
                  });
}

/// y[i] = x[i] dropped or scaled, as element first + i of the stream.
AMPC_VECTOR_CLONES void droppedOut(const float *x, float *y, int64_t n, uint64_t stream,
                                   uint64_t first, double rate, float keep) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    y[i] = num::dropoutAt(x[i], stream, first + (uint64_t)i, rate, keep);
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
  forF32Chunks<1>({F32Source{&c.in[0]}}, c.out[0],
                  [&](const float *const *in, float *y, int64_t at, int64_t n) {
                    droppedOut(in[0], y, n, stream, (uint64_t)at, rate, keep);
                  });
}

} // namespace

void addUnaryKernels(KernelTable &t) {
  t.addEach(isUnaryKernel, unaryKernel);
  t[Kernel::Dropout] = dropout;
  t[Kernel::UnaryBackward] = unaryBackward;
}

} // namespace ampc::rt
