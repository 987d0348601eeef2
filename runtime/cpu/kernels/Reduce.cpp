// reduce_sum and reduce_mean; sums in double.
#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

template <bool Mean> void reduce(KernelContext &c) {
  const TensorRef &x = c.in[0];
  std::vector<int64_t> axes = attrInts(c, "axes");
  std::vector<bool> reduced(x.rank(), axes.empty());
  for (int64_t a : axes)
    reduced[axisOf(a, x.rank())] = true;
  // Output strides over the input's dimensions: 0 on reduced ones.
  std::vector<int64_t> outStride(x.rank(), 0);
  int64_t stride = 1, count = 1;
  for (int64_t d = x.rank() - 1; d >= 0; --d) {
    if (reduced[d]) {
      count *= x.shape[d];
      continue;
    }
    outStride[d] = stride;
    stride *= x.shape[d];
  }
  F32In fx(x);
  std::vector<double> acc(c.out[0].size(), 0.0);
  std::vector<int64_t> idx(x.rank(), 0);
  int64_t at = 0;
  for (int64_t i = 0; i < x.size(); ++i) {
    acc[at] += fx[i];
    for (int64_t d = x.rank() - 1; d >= 0; --d) {
      at += outStride[d];
      if (++idx[d] < x.shape[d])
        break;
      at -= outStride[d] * x.shape[d];
      idx[d] = 0;
    }
  }
  F32Out y(c.out[0]);
  for (size_t i = 0; i < acc.size(); ++i)
    y[i] = float(Mean ? acc[i] / count : acc[i]);
  y.commit();
}

} // namespace

void addReduceKernels(KernelTable &t) {
  t[Kernel::ReduceSum] = reduce<false>;
  t[Kernel::ReduceMean] = reduce<true>;
}

} // namespace ampc::rt
