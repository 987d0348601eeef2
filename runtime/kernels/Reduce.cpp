// reduce_sum, reduce_mean, softmax and log_softmax; sums in double.
#include <cmath>
#include <limits>

#include "runtime/kernels/Exp.h"
#include "runtime/kernels/KernelUtil.h"

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

template <bool Log> void softmax(KernelContext &c) {
  const TensorRef &x = c.in[0];
  int64_t axis = axisOf(attrInt(c, "axis", -1), x.rank());
  int64_t dim = x.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.shape[d];
  int64_t outer = (dim * inner) != 0 ? x.size() / (dim * inner) : 0;
  F32In fx(x);
  F32Out y(c.out[0]);
  if (inner == 1) { // the last axis: contiguous rows, vectorised exp
#pragma omp parallel for if (x.size() > kParallelGrain)
    for (int64_t o = 0; o < outer; ++o) {
      const float *px = fx.data() + o * dim;
      float max, *py = y.data() + o * dim;
      double sum = expShiftedRow(px, dim, py, max), logSum = std::log(sum);
      float inverse = float(1.0 / sum);
      for (int64_t k = 0; k < dim; ++k)
        py[k] = Log ? float(double(px[k] - max) - logSum) : py[k] * inverse;
    }
    y.commit();
    return;
  }
#pragma omp parallel for collapse(2) if (x.size() > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *px = fx.data() + o * dim * inner + i;
      float *py = y.data() + o * dim * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < dim; ++k)
        max = std::max(max, px[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k)
        sum += std::exp(double(px[k * inner] - max));
      double logSum = std::log(sum);
      for (int64_t k = 0; k < dim; ++k) {
        double shifted = px[k * inner] - max;
        py[k * inner] = float(Log ? shifted - logSum : std::exp(shifted - logSum));
      }
    }
  y.commit();
}

} // namespace

void addReduceKernels(KernelTable &t) {
  t["reduce_sum"] = reduce<false>;
  t["reduce_mean"] = reduce<true>;
  t["softmax"] = softmax<false>;
  t["log_softmax"] = softmax<true>;
}

} // namespace ampc::rt
