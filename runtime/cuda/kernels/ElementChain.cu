// The elementwise_chain kernel: one thread per result element reads its
// operands (broadcast), evaluates the chain with the shared num::evalChain
// (the CPU's code) and stores each output once. Every thread of a launch runs
// the same program, so its branches do not diverge. Where every operand has
// the result's shape, a thread takes four consecutive elements, a load of
// each operand where every operand and output allows it (Quads.h), and
// dispatches each op of the chain once for the four (num::evalChainLanes).
#include "runtime/core/ElementChain.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Quads.h"
#include "runtime/numerics/IntDivider.h"

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

/// W consecutive elements from i (a quad-aligned unit where W is 4): each
/// operand loaded, the chain evaluated once for the W, each output stored.
template <int W>
__device__ void chainUnit(const num::Chain &chain, const ChainOperands &in, int64_t i) {
  float slots[num::kChainInputs + num::kChainOps][W];
#pragma unroll
  for (int k = 0; k < num::kChainInputs; ++k)
    if (k < chain.inputs)
      loadUnit<W>(in.data[k], in.dtype[k], i, slots[k]);
  num::evalChainLanes<W>(chain, slots);
  for (int k = 0; k < chain.outputs; ++k)
    storeUnit<W>(in.out[k], in.outDtype[k], i, slots[chain.result[k]]);
}

/// Every operand dense: element i of each, a quad at a time where every
/// operand and output allows it (Quads.h), a unit a thread. The loops are
/// not unrolled: each copy of the chain's interpreter is the code of every
/// element function, and copies of it are what the instruction cache
/// cannot hold (docs/cuda.md, "Elementwise chains").
__global__ void denseChainKernel(num::Chain chain, ChainOperands in, int64_t n, bool quads) {
  int64_t first = blockIdx.x * (int64_t)blockDim.x + threadIdx.x,
          step = (int64_t)gridDim.x * blockDim.x, split = quads ? n / kQuad * kQuad : 0;
#pragma unroll 1
  for (int64_t q = first; q < split / kQuad; q += step)
    chainUnit<kQuad>(chain, in, q * kQuad);
#pragma unroll 1
  for (int64_t i = split + first; i < n; i += step)
    chainUnit<1>(chain, in, i);
}

/// The result's dimensions as divisors (IntDivider; docs/cuda.md, "Index
/// arithmetic").
template <typename I> struct ChainDims {
  num::IntDivider<I> d[kMaxRank];
};

/// Some operand broadcast: each element's offsets from its coordinates.
template <typename I>
__global__ void chainKernel(num::Chain chain, ChainOperands in, ChainDims<I> dims, int64_t n) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t at[num::kChainInputs] = {};
    I rest = I(i);
    for (int d = in.rank - 1; d >= 0; --d) {
      num::DivMod<I> q = dims.d[d].divMod(rest);
      rest = q.quotient;
      for (int k = 0; k < chain.inputs; ++k)
        at[k] += int64_t(q.remainder) * in.stride[k][d];
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
    denseChainKernel<<<blocksFor(quads ? y.size() / kQuad : y.size()), kThreads, 0,
                       c.stream()>>>(chain, in, y.size(), quads);
  } else {
    auto launch = [&](auto dims) {
      using I = decltype(dims.d[0].divisor);
      for (int d = 0; d < in.rank; ++d)
        dims.d[d] = num::IntDivider<I>(I(in.shape[d]));
      chainKernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(chain, in, dims, y.size());
    };
    if ((uint64_t)y.size() < num::IntDivider<uint32_t>::kLimit)
      launch(ChainDims<uint32_t>{});
    else
      launch(ChainDims<uint64_t>{});
  }
  launched(c);
}

} // namespace

void addElementChainKernels(KernelTable &t) { t[Kernel::ElementwiseChain] = elementwiseChain; }

} // namespace ampc::rt::cuda
