// batch_norm (inference: running statistics; training: batch statistics,
// moving the running ones by `momentum`) and layer_norm. Statistics are
// accumulated in double.
#include <cmath>

#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void batchNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  bool nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
  double eps = attrF64(c, "epsilon", 1e-5), momentum = attrF64(c, "momentum", 0.9);
  int64_t axis = nhwc ? x.rank() - 1 : 1, channels = x.shape[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.shape[d];
  int64_t outer = x.size() / (channels * inner), count = outer * inner;
  F32In fx(x), scale(c.in[1]), bias(c.in[2]);
  F32Out y(c.out[0]);
  std::vector<double> mean(channels), var(channels);
  if (c.training) {
    // Row-major passes; the innermost loop runs over contiguous elements.
    const float *px = fx.data();
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t ch = 0; ch < channels; ++ch) {
        const float *row = px + (o * channels + ch) * inner;
        double sum = 0;
        for (int64_t i = 0; i < inner; ++i)
          sum += row[i];
        mean[ch] += sum;
      }
    for (double &m : mean)
      m /= count;
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t ch = 0; ch < channels; ++ch) {
        const float *row = px + (o * channels + ch) * inner;
        double sum = 0;
        for (int64_t i = 0; i < inner; ++i)
          sum += (row[i] - mean[ch]) * (row[i] - mean[ch]);
        var[ch] += sum;
      }
    std::vector<float> runMean(channels), runVar(channels);
    toF32(c.in[3].data, c.in[3].dtype, runMean.data(), channels);
    toF32(c.in[4].data, c.in[4].dtype, runVar.data(), channels);
    for (int64_t ch = 0; ch < channels; ++ch) {
      var[ch] /= count;
      double unbiased = count > 1 ? var[ch] * count / (count - 1) : var[ch];
      runMean[ch] = float(momentum * runMean[ch] + (1 - momentum) * mean[ch]);
      runVar[ch] = float(momentum * runVar[ch] + (1 - momentum) * unbiased);
    }
    fromF32(runMean.data(), c.in[3].data, c.in[3].dtype, channels);
    fromF32(runVar.data(), c.in[4].data, c.in[4].dtype, channels);
  } else {
    F32In rm(c.in[3]), rv(c.in[4]);
    for (int64_t ch = 0; ch < channels; ++ch) {
      mean[ch] = rm[ch];
      var[ch] = rv[ch];
    }
  }
  std::vector<float> a(channels), b(channels);
  for (int64_t ch = 0; ch < channels; ++ch) {
    a[ch] = float(scale[ch] / std::sqrt(var[ch] + eps));
    b[ch] = float(bias[ch] - mean[ch] * a[ch]);
  }
  const float *px = fx.data();
  float *py = y.data();
#pragma omp parallel for if (x.size() > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o) {
    if (inner == 1) { // channels last: one vectorisable row per pixel
      const float *row = px + o * channels;
      float *dst = py + o * channels;
      for (int64_t ch = 0; ch < channels; ++ch)
        dst[ch] = row[ch] * a[ch] + b[ch];
      continue;
    }
    for (int64_t ch = 0; ch < channels; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t at = (o * channels + ch) * inner + i;
        py[at] = px[at] * a[ch] + b[ch];
      }
  }
  y.commit();
}

void layerNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  int64_t axis = axisOf(attrInt(c, "axis", -1), x.rank());
  double eps = attrF64(c, "epsilon", 1e-5);
  int64_t inner = 1;
  for (int64_t d = axis; d < x.rank(); ++d)
    inner *= x.shape[d];
  int64_t rows = inner ? x.size() / inner : 0;
  F32In fx(x), scale(c.in[1]), bias(c.in[2]);
  F32Out y(c.out[0]);
#pragma omp parallel for if (x.size() > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = fx.data() + r * inner;
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += row[i];
    mean /= inner;
    for (int64_t i = 0; i < inner; ++i)
      var += (row[i] - mean) * (row[i] - mean);
    var /= inner;
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i)
      y[r * inner + i] = float((row[i] - mean) * inv * scale[i] + bias[i]);
  }
  y.commit();
}

} // namespace

void addNormKernels(KernelTable &t) {
  t["batch_norm"] = batchNorm;
  t["layer_norm"] = layerNorm;
}

} // namespace ampc::rt
