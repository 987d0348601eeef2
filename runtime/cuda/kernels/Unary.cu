// Elementwise kernels of one operand through the functors of
// runtime/numerics/ElementFns.h (the CPU's own code, each kernel's function
// decoded by unaryCallOf), their backward, and
// dropout with the CPU's counter-based bits (the run counter read on the
// device, so a captured step draws anew each run).
#include "runtime/core/Convert.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Quads.h"
#include "runtime/numerics/ElementFns.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt::cuda {
namespace {

template <typename F> __global__ void valueKernel(View x, View y, F f, bool quads) {
  quadMap(x, y, quads, [&](float v) { return f.value(v); });
}

template <typename F> void unary(LaunchContext &c, F f) {
  View x = viewOf(c.in[0]), y = viewOf(c.out[0]);
  bool quads = quadsFit({x, y});
  valueKernel<<<blocksForQuads(y.size, quads), kThreads, 0, c.stream()>>>(x, y, f, quads);
  launched(c);
}

/// W elements of x, y and dy.
template <int W> struct Operands {
  float x[W], y[W], dy[W];
};

/// dx = dy * f'(x, y).
template <typename F>
__global__ void derivativeKernel(View x, View y, View dy, View dx, F f, bool quads) {
  quadElements(
      dx.size, quads,
      [&](auto w, int64_t i) {
        constexpr int W = decltype(w)::value;
        Operands<W> o;
        loadUnit<W>(x.data, x.dtype, i, o.x);
        loadUnit<W>(y.data, y.dtype, i, o.y);
        loadUnit<W>(dy.data, dy.dtype, i, o.dy);
        return o;
      },
      [&](auto w, int64_t i, auto o) {
#pragma unroll
        for (int k = 0; k < decltype(w)::value; ++k)
          o.dy[k] *= f.derivative(o.x[k], o.y[k]);
        storeUnit<decltype(w)::value>(dx.data, dx.dtype, i, o.dy);
      });
}

template <typename F> void derivative(LaunchContext &c, F f) {
  View x = viewOf(c.in[0]), y = viewOf(c.in[1]), dy = viewOf(c.in[2]), dx = viewOf(c.out[0]);
  bool quads = quadsFit({x, y, dy, dx});
  derivativeKernel<<<blocksForQuads(dx.size, quads), kThreads, 0, c.stream()>>>(x, y, dy, dx, f,
                                                                                quads);
  launched(c);
}

void unaryKernel(LaunchContext &c) {
  withFunctor(unaryCallOf(c.step, c.attrs), [&](auto f) { unary(c, f); });
}

void unaryBackward(LaunchContext &c) {
  withFunctor(unaryCallOf(c.step, c.attrs), [&](auto f) { derivative(c, f); });
}

__global__ void dropoutKernel(View x, View y, const uint64_t *iteration, uint64_t seed,
                              uint64_t opSeed, double rate, float keep) {
  uint64_t stream = num::dropoutStream(seed, opSeed, iteration ? *iteration : 0);
  AMPC_GRID_STRIDE(i, y.size) {
    store(y.data, y.dtype, i, num::dropoutAt(load(x.data, x.dtype, i), stream, i, rate, keep));
  }
}

void dropout(LaunchContext &c) {
  double rate = c.attrs.getF64("rate", 0.5);
  if (!c.training || rate == 0.0) {
    if (c.in[0].data != c.out[0].data)
      AMPC_CUDA_CHECK(cudaMemcpyAsync(c.out[0].data, c.in[0].data, c.out[0].bytes(),
                                      cudaMemcpyDeviceToDevice, c.stream()));
    return;
  }
  const uint64_t *iteration = c.in.size() > 1 ? c.in.back().as<uint64_t>() : nullptr;
  dropoutKernel<<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.out[0]), iteration, c.seed,
      (uint64_t)c.attrs.getInt("seed", 0), rate, 1.0f / float(1.0 - rate));
  launched(c);
}

} // namespace

void addUnaryKernels(KernelTable &t) {
  t.addEach(isUnaryKernel, unaryKernel);
  t[Kernel::UnaryBackward] = unaryBackward;
  t[Kernel::Dropout] = dropout;
}

} // namespace ampc::rt::cuda
