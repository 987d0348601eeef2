// matmul (batched, transposed, broadcast) through the CPU GEMM; f16/bf16
// operands are widened to f32 first and the f32 result is rounded on output.
// The GEMM epilogues (docs/runtime.md, "GEMM epilogues") work on the f32
// result before that one rounding, as cuBLASLt's do: matmul_bias adds the
// bias and applies relu or the tanh GELU, keeping the relu mask or the GELU
// input when asked; matmul_act_grad applies the activation's derivative and
// sums the columns; matmul_bias_grad sums b's columns beside aᵀ·b.
#include <algorithm>
#include <cstring>

#include "runtime/cpu/Gemm.h"
#include "runtime/core/ReluMask.h"
#include "runtime/core/StepVariants.h"
#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt {

void matmulProduct(KernelContext &c, float *product) {
  const TensorRef &a = c.in[0], &b = c.in[1], &o = c.out[0];
  bool ta = attrBool(c, "transpose_a", false), tb = attrBool(c, "transpose_b", false);
  int64_t m = o.dim(-2), n = o.dim(-1), k = ta ? a.dim(-2) : a.dim(-1);
  F32In fa(a, roundedInput(c, 0)), fb(b, roundedInput(c, 1));
  int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if (b.rank() == 2 && !ta) { // fold a's batch dimensions into the rows
    gemm(false, tb, o.size() / std::max<int64_t>(n, 1), n, k, fa.data(), lda, fb.data(), ldb,
         product, n);
    return;
  }
  std::vector<int64_t> batch(o.shape.begin(), o.shape.end() - 2);
  int64_t batches = numElements(batch);
  auto batchStrides = [&](const TensorRef &t) {
    std::vector<int64_t> dims(t.shape.begin(), t.shape.end() - 2);
    std::vector<int64_t> s(batch.size(), 0), own = stridesOf(dims);
    size_t off = batch.size() - dims.size();
    int64_t matrix = t.dim(-1) * t.dim(-2);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != 1)
        s[off + i] = own[i] * matrix;
    return s;
  };
  std::vector<int64_t> sa = batchStrides(a), sb = batchStrides(b);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, offA = 0, offB = 0;
    for (int64_t d = (int64_t)batch.size() - 1; d >= 0; --d) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      offA += idx * sa[d];
      offB += idx * sb[d];
    }
    gemm(ta, tb, m, n, k, fa.data() + offA, lda, fb.data() + offB, ldb,
         product + bi * m * n, n);
  }
}

namespace {

void matmul(KernelContext &c) {
  F32Out fo(c.out[0]);
  matmulProduct(c, fo.data());
  fo.commit();
}

template <typename Act> void addBias(F32Out &fo, const float *bias, int64_t size, int64_t n) {
  Act act{};
#pragma omp parallel for if (size > kParallelGrain)
  for (int64_t i = 0; i < size; ++i)
    fo[i] = act.value(fo[i] + bias[i % n]);
}

struct NoActivation {
  float value(float x) const { return x; }
};

/// Sets bit c % 32 of word [r, c / 32] where y[r, c] > 0 (core/ReluMask.h).
void writeReluMask(const TensorRef &y, const TensorRef &mask) {
  F32In v(y);
  int64_t size = y.size();
  uint32_t *words = mask.as<uint32_t>();
  std::memset(words, 0, mask.bytes());
  for (int64_t i = 0; i < size; ++i)
    if (v[i] > 0.0f)
      words[i / 32] |= 1u << (i % 32);
}

bool maskBit(const TensorRef &mask, int64_t i) {
  return (mask.as<const uint32_t>()[i / 32] >> (i % 32)) & 1u;
}

void matmulBias(KernelContext &c) {
  const TensorRef &o = c.out[0];
  F32Out fo(o);
  matmulProduct(c, fo.data());
  F32In bias(c.in[2], roundedInput(c, 2));
  int64_t n = std::max<int64_t>(o.dim(-1), 1);
  GemmEpilogue e = gemmEpilogueOf(c.step, c.attrs);
  if (e.keepsAux && e.activation == Activation::GeluTanh) { // the GELU input, as the backward reads it
    F32Out pre(c.out[1]);
    for (int64_t i = 0; i < o.size(); ++i)
      pre[i] = fo[i] + bias[i % n];
    pre.commit();
  }
  if (e.activation == Activation::Relu)
    addBias<num::Relu>(fo, bias.data(), o.size(), n);
  else if (e.activation == Activation::GeluTanh)
    addBias<num::GeluTanh>(fo, bias.data(), o.size(), n);
  else
    addBias<NoActivation>(fo, bias.data(), o.size(), n);
  fo.commit();
  if (e.reluMask())
    writeReluMask(o, c.out[1]);
}

void matmulActGrad(KernelContext &c) {
  const TensorRef &dz = c.out[0], &aux = c.in[2];
  F32Out fo(dz);
  matmulProduct(c, fo.data());
  int64_t size = dz.size();
  if (gemmEpilogueOf(c.step, c.attrs).activation == Activation::Relu) {
    // dy · relu'(x) as unary_backward computes it: -0 and NaN kept.
    for (int64_t i = 0; i < size; ++i)
      fo[i] *= maskBit(aux, i) ? 1.0f : 0.0f;
  } else {
    F32In x(aux);
    num::GeluTanh gelu;
    for (int64_t i = 0; i < size; ++i)
      fo[i] *= gelu.derivative(x[i], 0.0f);
  }
  fo.commit();
  sumOnto(dz, c.out[1]);
}

void matmulBiasGrad(KernelContext &c) {
  F32Out fo(c.out[0]);
  matmulProduct(c, fo.data());
  fo.commit();
  sumOnto(c.in[1], c.out[1]);
}

} // namespace

void addMatmulKernels(KernelTable &t) {
  t[Kernel::Matmul] = matmul;
  t[Kernel::MatmulBias] = matmulBias;
  t[Kernel::MatmulActGrad] = matmulActGrad;
  t[Kernel::MatmulBiasGrad] = matmulBiasGrad;
}

} // namespace ampc::rt
