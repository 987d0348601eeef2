// FP8 kernels on the GPU (docs/runtime.md, "FP8 GEMMs"): fp8_quantize
// (x * scale rounded to FP8 with numerics/Fp8.h, the amax in the same pass)
// and fp8_matmul: cuBLASLt's FP8 GEMM where the step is in its TN layout
// (Fp8Gemm.cu), else a plain loop over K per result element, the baseline
// the backend check holds both to. Both need sm_89 or newer.
#include "runtime/cuda/kernels/Fp8Gemm.h"
#include "runtime/numerics/Fp8.h"

namespace ampc::rt::cuda {
namespace {

__global__ void fp8QuantizeKernel(View x, const float *scale, uint8_t *y, num::Fp8Format format,
                                  unsigned *amaxBits) {
  float s = *scale, local = 0.0f;
  AMPC_GRID_STRIDE(i, x.size) {
    float v = load(x.data, x.dtype, i);
    y[i] = num::toFp8(double(v * s), format);
    local = fmaxf(local, fabsf(v)); // NaN ignored, inf kept
  }
  for (int offset = 16; offset > 0; offset /= 2)
    local = fmaxf(local, __shfl_down_sync(0xffffffffu, local, offset));
  if ((threadIdx.x & 31) == 0) // non-negative floats order as their bits
    atomicMax(amaxBits, __float_as_uint(local));
}

/// FP8 work needs FP8 tensor cores (sm_89: Ada, Hopper and newer).
void requireFp8(LaunchContext &c) {
  if (int cc = c.device.capability(); cc < 89)
    c.fail("--dtype fp8 needs sm_89 or newer; this GPU (" + c.device.name() + ") is sm_" +
           std::to_string(cc) + ": train at --dtype bf16");
}

void fp8Quantize(LaunchContext &c) {
  requireFp8(c);
  const TensorRef &x = c.in[0], &y = c.out[0];
  AMPC_CUDA_CHECK(cudaMemsetAsync(c.out[1].data, 0, sizeof(float), c.stream()));
  num::Fp8Format format = y.dtype == DType::F8E4M3 ? num::kE4M3 : num::kE5M2;
  fp8QuantizeKernel<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(
      viewOf(x), c.in[1].as<float>(), y.as<uint8_t>(), format, c.out[1].as<unsigned>());
  launched(c);
}

constexpr int kMaxBatchDims = 6;

/// A batched GEMM's shape: m x k times k x n per batch, batch dimensions
/// broadcast (a stride of 0 where an operand has size 1 there).
struct Fp8Gemm {
  int64_t m, n, k;
  int rank;
  int64_t batch[kMaxBatchDims], strideA[kMaxBatchDims], strideB[kMaxBatchDims];
  bool ta, tb;
};

__global__ void fp8MatmulKernel(View a, View b, const float *aInv, const float *bInv, View y,
                                Fp8Gemm g) {
  float alpha = *aInv * *bInv;
  AMPC_GRID_STRIDE(idx, y.size) {
    int64_t col = idx % g.n, row = (idx / g.n) % g.m, rest = idx / (g.n * g.m);
    int64_t offA = 0, offB = 0;
    for (int d = g.rank - 1; d >= 0; --d) {
      int64_t at = rest % g.batch[d];
      rest /= g.batch[d];
      offA += at * g.strideA[d];
      offB += at * g.strideB[d];
    }
    float acc = 0.0f;
    for (int64_t p = 0; p < g.k; ++p) {
      float av = load(a.data, a.dtype, offA + (g.ta ? p * g.m + row : row * g.k + p));
      float bv = load(b.data, b.dtype, offB + (g.tb ? col * g.k + p : p * g.n + col));
      acc += av * bv;
    }
    store(y.data, y.dtype, idx, acc * alpha);
  }
}

void fp8Matmul(LaunchContext &c) {
  requireFp8(c);
  if (c.out[0].size() == 0 || fp8GemmLt(c))
    return;
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  Fp8Gemm g{};
  g.ta = c.attrs.getBool("transpose_a", false);
  g.tb = c.attrs.getBool("transpose_b", false);
  g.m = y.dim(-2);
  g.n = y.dim(-1);
  g.k = g.ta ? a.dim(-2) : a.dim(-1);
  g.rank = int(y.rank()) - 2;
  if (g.rank > kMaxBatchDims)
    c.fail("fp8_matmul: more than " + std::to_string(kMaxBatchDims) + " batch dimensions");
  auto strides = [&](const TensorRef &t, int64_t *out) {
    int own = int(t.rank()) - 2, off = g.rank - own;
    int64_t stride = t.dim(-1) * t.dim(-2);
    for (int d = g.rank - 1; d >= 0; --d) {
      out[d] = 0;
      if (d < off)
        continue;
      int64_t size = t.shape[d - off];
      out[d] = size == 1 ? 0 : stride;
      stride *= size;
    }
  };
  for (int d = 0; d < g.rank; ++d)
    g.batch[d] = y.shape[d];
  strides(a, g.strideA);
  strides(b, g.strideB);
  fp8MatmulKernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(
      viewOf(a), viewOf(b), c.in[2].as<float>(), c.in[3].as<float>(), viewOf(y), g);
  launched(c);
}

} // namespace

void addFp8Kernels(KernelTable &t) {
  t[Kernel::Fp8Quantize] = fp8Quantize;
  t[Kernel::Fp8Matmul] = fp8Matmul;
}

} // namespace ampc::rt::cuda
