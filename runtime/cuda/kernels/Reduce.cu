// reduce_sum and reduce_mean: each output sums its elements in double, in
// row-major order, as the CPU does, so the results are the CPU's bits.
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

/// The reduced axes of x and the strides that reach its elements.
struct Reduction {
  int rank;
  int64_t shape[kMaxRank], stride[kMaxRank];
  bool reduced[kMaxRank];
  int64_t count;
};

template <bool Mean> __global__ void reduceKernel(View x, View y, Reduction r) {
  AMPC_GRID_STRIDE(j, y.size) {
    int64_t base = 0, rest = j;
    for (int d = r.rank - 1; d >= 0; --d)
      if (!r.reduced[d]) {
        base += (rest % r.shape[d]) * r.stride[d];
        rest /= r.shape[d];
      }
    double sum = 0;
    for (int64_t k = 0; k < r.count; ++k) {
      int64_t at = base, left = k;
      for (int d = r.rank - 1; d >= 0; --d)
        if (r.reduced[d]) {
          at += (left % r.shape[d]) * r.stride[d];
          left /= r.shape[d];
        }
      sum += load(x.data, x.dtype, at);
    }
    store(y.data, y.dtype, j, float(Mean ? sum / r.count : sum));
  }
}

template <bool Mean> void reduce(LaunchContext &c) {
  const TensorRef &x = c.in[0];
  if (x.rank() > kMaxRank)
    c.fail("tensors of rank above 8 are not supported on cuda");
  std::vector<int64_t> axes = c.attrs.getInts("axes");
  Reduction r{(int)x.rank(), {}, {}, {}, 1};
  int64_t s = 1;
  for (int64_t d = x.rank() - 1; d >= 0; --d) {
    r.shape[d] = x.shape[d];
    r.stride[d] = s;
    s *= x.shape[d];
    r.reduced[d] = axes.empty();
  }
  for (int64_t a : axes)
    r.reduced[a < 0 ? a + x.rank() : a] = true;
  for (int d = 0; d < r.rank; ++d)
    if (r.reduced[d])
      r.count *= r.shape[d];
  reduceKernel<Mean>
      <<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(viewOf(x), viewOf(c.out[0]), r);
  launched(c);
}

} // namespace

void addReduceKernels(KernelTable &t) {
  t[Kernel::ReduceSum] = reduce<false>;
  t[Kernel::ReduceMean] = reduce<true>;
}

} // namespace ampc::rt::cuda
