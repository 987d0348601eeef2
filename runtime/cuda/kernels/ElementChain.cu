// The elementwise_chain kernel: one thread per result element reads its
// operands (broadcast), evaluates the chain with the shared num::evalChain
// (the CPU's code) and stores each output once. Every thread of a launch runs
// the same program, so its branches do not diverge. Where every operand has
// the result's shape, a thread loads the operands of several elements before
// it evaluates any, four consecutive ones a load where every operand and
// output allows it (Quads.h).
#include "runtime/core/ElementChain.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Quads.h"

namespace ampc::rt::cuda {
namespace {

/// The launch's operands: where each lives, and its strides on the result's
/// dimensions (0 where it broadcasts). `dense`: it has the result's shape,
/// so element i is its element i.
struct ChainOperands {
  const void *data[num::kChainInputs];
  DType dtype[num::kChainInputs];
  bool dense[num::kChainInputs], allDense;
  int rank;
  int64_t shape[kMaxRank];
  int64_t stride[num::kChainInputs][kMaxRank];
  void *out[num::kChainOutputs];
  DType outDtype[num::kChainOutputs];
};

__device__ void evalAndStore(const num::Chain &chain, const ChainOperands &in, int64_t i,
                             float *slots) {
  num::evalChain(chain, slots);
  for (int k = 0; k < chain.outputs; ++k)
    store(in.out[k], in.outDtype[k], i, slots[chain.result[k]]);
}

/// W elements of each operand.
template <int W> struct Operands {
  float v[num::kChainInputs][W];
};

/// Every operand dense: element i of each, unrolled, four a load where
/// every operand and output allows it (Quads.h).
__global__ void denseChainKernel(num::Chain chain, ChainOperands in, int64_t n, bool quads) {
  quadElements<1>(
      n, quads,
      [&](auto w, int64_t i) {
        Operands<decltype(w)::value> o;
#pragma unroll
        for (int k = 0; k < num::kChainInputs; ++k)
          if (k < chain.inputs)
            loadUnit<decltype(w)::value>(in.data[k], in.dtype[k], i, o.v[k]);
        return o;
      },
      [&](auto w, int64_t i, const auto &o) {
        constexpr int W = decltype(w)::value;
        float results[num::kChainOutputs][W];
#pragma unroll
        for (int e = 0; e < W; ++e) {
          float slots[num::kChainInputs + num::kChainOps];
#pragma unroll
          for (int k = 0; k < num::kChainInputs; ++k)
            slots[k] = o.v[k][e];
          num::evalChain(chain, slots);
          for (int k = 0; k < chain.outputs; ++k)
            results[k][e] = slots[chain.result[k]];
        }
        for (int k = 0; k < chain.outputs; ++k)
          storeUnit<W>(in.out[k], in.outDtype[k], i, results[k]);
      });
}

/// Some operand broadcast: each element's offsets from its coordinates.
__global__ void chainKernel(num::Chain chain, ChainOperands in, int64_t n) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t at[num::kChainInputs] = {};
    int64_t rest = i;
    for (int d = in.rank - 1; d >= 0; --d) {
      int64_t idx = rest % in.shape[d];
      rest /= in.shape[d];
      for (int k = 0; k < chain.inputs; ++k)
        at[k] += idx * in.stride[k][d];
    }
    float slots[num::kChainInputs + num::kChainOps];
    for (int k = 0; k < chain.inputs; ++k)
      slots[k] = load(in.data[k], in.dtype[k], in.dense[k] ? i : at[k]);
    evalAndStore(chain, in, i, slots);
  }
}

void elementwiseChain(LaunchContext &c) {
  // The signature check decoded it before the first run: it is well formed.
  num::Chain chain = decodeChain(c.attrs, c.in.size(), c.out.size());
  const TensorRef &y = c.out[0];
  if (y.rank() > kMaxRank)
    c.fail("tensors of rank above 8 are not supported on cuda");
  ChainOperands in{};
  in.rank = (int)y.rank();
  in.allDense = true;
  for (int d = 0; d < in.rank; ++d)
    in.shape[d] = y.shape[d];
  for (size_t k = 0; k < c.in.size(); ++k) {
    const TensorRef &t = c.in[k];
    in.data[k] = t.data;
    in.dtype[k] = t.dtype;
    in.dense[k] = t.shape == y.shape;
    in.allDense &= in.dense[k];
    alignedStrides(t.shape, y.shape, in.stride[k]);
  }
  for (size_t k = 0; k < c.out.size(); ++k) {
    in.out[k] = c.out[k].data;
    in.outDtype[k] = c.out[k].dtype;
  }
  if (y.size() == 0)
    return;
  if (in.allDense) {
    bool quads = true;
    for (const std::vector<TensorRef> *list : {&c.in, &c.out})
      for (const TensorRef &t : *list)
        quads &= quadAligned(t.data, t.dtype);
    denseChainKernel<<<blocksForQuads(y.size(), quads), kThreads, 0, c.stream()>>>(
        chain, in, y.size(), quads);
  } else
    chainKernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(chain, in, y.size());
  launched(c);
}

} // namespace

void addElementChainKernels(KernelTable &t) { t[Kernel::ElementwiseChain] = elementwiseChain; }

} // namespace ampc::rt::cuda
