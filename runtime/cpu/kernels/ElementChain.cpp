// The elementwise_chain kernel: one pass over the result, each element's
// operands read (broadcast), the chain evaluated by the shared
// num::evalChain (the code the CUDA kernel runs) and each output stored.
#include <memory>

#include "runtime/core/ElementChain.h"
#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void elementwiseChain(KernelContext &c) {
  // The signature check decoded it before the first run: it is well formed.
  num::Chain chain = decodeChain(c.attrs, c.in.size(), c.out.size());
  const TensorRef &y = c.out[0];
  size_t rank = y.shape.size(), count = c.in.size();
  std::vector<std::unique_ptr<F32In>> ins;
  std::vector<std::vector<int64_t>> strides;
  for (const TensorRef &t : c.in) {
    ins.push_back(std::make_unique<F32In>(t));
    strides.push_back(broadcastStrides(t.shape, rank));
  }
  std::vector<std::unique_ptr<F32Out>> outs;
  for (const TensorRef &t : c.out)
    outs.push_back(std::make_unique<F32Out>(t));
  int64_t n = y.size(), inner = rank ? y.shape.back() : 1;
  if (n == 0)
    return;
  int64_t outer = n / inner;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o) {
    // Where row o of the result starts in each operand.
    int64_t at[num::kChainInputs] = {};
    for (int64_t d = (int64_t)rank - 2, rest = o; d >= 0; --d) {
      int64_t idx = rest % y.shape[d];
      rest /= y.shape[d];
      for (size_t k = 0; k < count; ++k)
        at[k] += idx * strides[k][d];
    }
    float slots[num::kChainInputs + num::kChainOps];
    for (int64_t i = 0; i < inner; ++i) {
      for (size_t k = 0; k < count; ++k)
        slots[k] = (*ins[k])[at[k] + (rank ? i * strides[k][rank - 1] : 0)];
      num::evalChain(chain, slots);
      for (int k = 0; k < chain.outputs; ++k)
        (*outs[k])[o * inner + i] = slots[chain.result[k]];
    }
  }
  for (auto &out : outs)
    out->commit();
}

} // namespace

void addElementChainKernels(KernelTable &t) { t[Kernel::ElementwiseChain] = elementwiseChain; }

} // namespace ampc::rt
