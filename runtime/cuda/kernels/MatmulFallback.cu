// The GEMM epilogues a step finishes itself where cuBLASLt has no algorithm
// with them (Matmul.cu): after a plain GEMM (with the bias, for
// matmul_bias), these kernels do what the epilogue would, to the CPU's
// definitions (docs/runtime.md, "GEMM epilogues"). Each is one pass over
// the result, plus the column sums of a bias gradient.
#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt::cuda {
namespace {

/// y = relu(y), and mask word w = the bits of y's elements 32w .. 32w+31
/// that are positive (runtime/core/ReluMask.h).
__global__ void reluKeepingMask(View y, uint32_t *mask, int64_t words) {
  num::Relu relu;
  AMPC_GRID_STRIDE(w, words) {
    uint32_t bits = 0;
    for (int b = 0; b < 32; ++b) {
      int64_t i = w * 32 + b;
      float v = relu.value(load(y.data, y.dtype, i));
      store(y.data, y.dtype, i, v);
      bits |= (v > 0.0f ? 1u : 0u) << b;
    }
    mask[w] = bits;
  }
}

/// x = y (the GELU's input, y's dtype), y = gelu(y).
__global__ void geluKeepingInput(View y, View x) {
  num::GeluTanh gelu;
  AMPC_GRID_STRIDE(i, y.size) {
    float v = load(y.data, y.dtype, i);
    store(x.data, x.dtype, i, v);
    store(y.data, y.dtype, i, gelu.value(v));
  }
}

/// dz *= relu'(y) as the mask holds it, or the GELU's derivative at x.
template <bool Relu> __global__ void activationGrad(View dz, View aux) {
  num::GeluTanh gelu;
  const uint32_t *mask = static_cast<const uint32_t *>(aux.data);
  AMPC_GRID_STRIDE(i, dz.size) {
    float d = Relu ? ((mask[i / 32] >> (i % 32)) & 1u ? 1.0f : 0.0f)
                   : gelu.derivative(load(aux.data, aux.dtype, i), 0.0f);
    store(dz.data, dz.dtype, i, load(dz.data, dz.dtype, i) * d);
  }
}

} // namespace

void finishEpilogue(LaunchContext &c) {
  const TensorRef &y = c.out[0];
  bool relu = gemmEpilogueOf(c.step, c.attrs).activation == Activation::Relu;
  if (c.step.kernel == Kernel::MatmulBias && relu) {
    int64_t words = y.size() / 32;
    reluKeepingMask<<<blocksFor(words), kThreads, 0, c.stream()>>>(viewOf(y),
                                                                   c.out[1].as<uint32_t>(), words);
  } else if (c.step.kernel == Kernel::MatmulBias) {
    geluKeepingInput<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(viewOf(y), viewOf(c.out[1]));
  } else if (c.step.kernel == Kernel::MatmulActGrad) {
    auto kernel = relu ? activationGrad<true> : activationGrad<false>;
    kernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(viewOf(y), viewOf(c.in[2]));
  }
  launched(c);
  if (c.step.kernel == Kernel::MatmulActGrad)
    sumColumns(c, y, c.out[1]);
  else if (c.step.kernel == Kernel::MatmulBiasGrad)
    sumColumns(c, c.in[1], c.out[1]);
}

} // namespace ampc::rt::cuda
