// FP8 kernels (docs/runtime.md, "FP8 GEMMs"): fp8_quantize rounds x * scale
// to FP8 and takes the amax in the same pass; fp8_matmul is the f32 GEMM of
// the exactly decoded operands times the scale inverses, rounded once.
#include <cmath>

#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Fp8.h"

namespace ampc::rt {
namespace {

/// y = fp8(x * scale), the product in f32; amax = max |x| (NaN ignored, as
/// fmaxf does; inf kept).
void fp8Quantize(KernelContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  float scale = scalarF32(c.in[1]);
  num::Fp8Format format = y.dtype == DType::F8E4M3 ? num::kE4M3 : num::kE5M2;
  F32In fx(x);
  uint8_t *codes = y.as<uint8_t>();
  float amax = 0.0f;
  int64_t n = x.size();
#pragma omp parallel for reduction(max : amax) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i) {
    float v = fx[i];
    codes[i] = num::toFp8(double(v * scale), format);
    amax = std::fmax(amax, std::fabs(v));
  }
  *c.out[1].as<float>() = amax;
}

void fp8Matmul(KernelContext &c) {
  F32Out fo(c.out[0]);
  matmulProduct(c, fo.data());
  float alpha = scalarF32(c.in[2]) * scalarF32(c.in[3]);
  int64_t size = c.out[0].size();
#pragma omp parallel for if (size > kParallelGrain)
  for (int64_t i = 0; i < size; ++i)
    fo[i] *= alpha;
  fo.commit();
}

} // namespace

void addFp8Kernels(KernelTable &t) {
  t[Kernel::Fp8Quantize] = fp8Quantize;
  t[Kernel::Fp8Matmul] = fp8Matmul;
}

} // namespace ampc::rt
