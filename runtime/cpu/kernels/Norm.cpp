// batch_norm (inference: running statistics; training: batch statistics,
// moving the running ones by `momentum`), layer_norm, and their backward.
// Statistics are accumulated in double. A batch norm with activation relu
// (docs/runtime.md, "Batch norm activations") computes what its unfused steps
// did, each rounding where theirs did: the norm's result, plus a residual,
// then the relu; its backward first masks dy by the relu's result.
#include <cmath>

#include "runtime/core/StepVariants.h"
#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt {
namespace {

/// batch_norm's relu on its f32 result y (the result's dtype `dtype`):
/// relu(round(round(y) + residual)), or relu(y).
void normRelu(KernelContext &c, const NormRelu &relu, float *y, DType dtype) {
  int64_t n = c.out[0].size();
  if (relu.operand >= 0) {
    roundIn(y, dtype, n);
    F32In r(c.in[relu.operand]);
    for (int64_t i = 0; i < n; ++i)
      y[i] += r[i];
  }
  roundIn(y, dtype, n);
  for (int64_t i = 0; i < n; ++i)
    y[i] = num::Relu{}.value(y[i]);
}

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
  NormRelu relu = normReluOf(c.step, c.attrs);
  if (relu.relu)
    normRelu(c, relu, py, c.out[0].dtype);
  y.commit();
}

/// Layer norm runs its rows in groups of kRows, their sums interleaved.
constexpr int kRows = 4;

/// The means and variances of kRows rows at once (f64, each row's sums in
/// element order, so each row gets the bits of a loop of its own): the
/// rows' additions do not wait for one another.
void rowMoments(const float *const *rows, int64_t n, double *mean, double *var) {
  double s[kRows] = {}, v[kRows] = {};
  for (int64_t i = 0; i < n; ++i)
    for (int r = 0; r < kRows; ++r)
      s[r] += rows[r][i];
  for (int r = 0; r < kRows; ++r)
    mean[r] = s[r] / n;
  for (int64_t i = 0; i < n; ++i)
    for (int r = 0; r < kRows; ++r)
      v[r] += (rows[r][i] - mean[r]) * (rows[r][i] - mean[r]);
  for (int r = 0; r < kRows; ++r)
    var[r] = v[r] / n;
}

/// body(r, mean, inv) for each of `rows` rows of `width` elements, in
/// groups of kRows on the threads (the last group repeats the last row).
template <typename Body>
void forRowMoments(const float *x, int64_t rows, int64_t width, double eps, Body body) {
  int64_t groups = (rows + kRows - 1) / kRows;
#pragma omp parallel for if (rows * width > kParallelGrain)
  for (int64_t g = 0; g < groups; ++g) {
    const float *group[kRows];
    double mean[kRows], var[kRows];
    for (int r = 0; r < kRows; ++r)
      group[r] = x + std::min(g * kRows + r, rows - 1) * width;
    rowMoments(group, width, mean, var);
    for (int r = 0; r < kRows && g * kRows + r < rows; ++r)
      body(g * kRows + r, mean[r], 1.0 / std::sqrt(var[r] + eps));
  }
}

void layerNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  int64_t axis = axisOf(attrInt(c, "axis", -1), x.rank());
  int64_t inner = 1;
  for (int64_t d = axis; d < x.rank(); ++d)
    inner *= x.shape[d];
  int64_t rows = inner ? x.size() / inner : 0;
  F32In fx(x), scale(c.in[1]), bias(c.in[2]);
  F32Out y(c.out[0]);
  forRowMoments(fx.data(), rows, inner, attrF64(c, "epsilon", 1e-5),
                [&](int64_t r, double mean, double inv) {
                  const float *row = fx.data() + r * inner;
                  for (int64_t i = 0; i < inner; ++i)
                    y[r * inner + i] = float((row[i] - mean) * inv * scale[i] + bias[i]);
                });
  y.commit();
}

/// Batch norm backward with channels last: every pass runs over [rows, C]
/// row by row, so the inner loop over channels is contiguous.
void batchNormBackwardChannelsLast(KernelContext &c, int64_t rows, int64_t channels) {
  F32In x(c.in[0]), dy(c.in[1]), scale(c.in[2]);
  double eps = attrF64(c, "epsilon", 1e-5);
  std::vector<double> mean(channels, 0.0), var(channels, 0.0), sumD(channels, 0.0),
      sumDX(channels, 0.0);
  const float *px = x.data(), *pd = dy.data();
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ch = 0; ch < channels; ++ch)
      mean[ch] += px[r * channels + ch];
  for (double &m : mean)
    m /= rows;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ch = 0; ch < channels; ++ch) {
      double d = px[r * channels + ch] - mean[ch];
      var[ch] += d * d;
    }
  std::vector<double> inv(channels);
  for (int64_t ch = 0; ch < channels; ++ch)
    inv[ch] = 1.0 / std::sqrt(var[ch] / rows + eps);
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ch = 0; ch < channels; ++ch) {
      double g = pd[r * channels + ch], xhat = (px[r * channels + ch] - mean[ch]) * inv[ch];
      sumD[ch] += g;
      sumDX[ch] += g * xhat;
    }
  F32Out dx(c.out[0]);
  float *out = dx.data();
#pragma omp parallel for if (rows * channels > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t ch = 0; ch < channels; ++ch) {
      double xhat = (px[r * channels + ch] - mean[ch]) * inv[ch];
      out[r * channels + ch] = float(scale[ch] * inv[ch] *
                                     (pd[r * channels + ch] - sumD[ch] / rows -
                                      xhat * sumDX[ch] / rows));
    }
  dx.commit();
  std::vector<float> ds(sumDX.begin(), sumDX.end()), db(sumD.begin(), sumD.end());
  fromF32(ds.data(), c.out[1].data, c.out[1].dtype, channels);
  fromF32(db.data(), c.out[2].data, c.out[2].dtype, channels);
}

/// Layer norm's dx, dscale and dbias: dx row by row on the threads, then
/// dscale and dbias in blocks of columns on the threads, each column's sum
/// over the rows in row order. The same bits as one loop over the rows
/// accumulating all three.
void layerNormGradients(KernelContext &c) {
  const TensorRef &xT = c.in[0];
  F32In x(xT), dy(c.in[1]), scale(c.in[2]);
  double eps = attrF64(c, "epsilon", 1e-5);
  int64_t axis = axisOf(attrInt(c, "axis", -1), xT.rank()), inner = 1;
  for (int64_t d = axis; d < xT.rank(); ++d)
    inner *= xT.shape[d];
  int64_t rows = inner ? xT.size() / inner : 0;
  std::vector<double> means(rows), invs(rows);
  F32Out dx(c.out[0]);
  forRowMoments(x.data(), rows, inner, eps, [&](int64_t r, double mean, double inv) {
    const float *xr = x.data() + r * inner, *dyr = dy.data() + r * inner;
    double sumD = 0, sumDX = 0;
    for (int64_t k = 0; k < inner; ++k) {
      double xhat = (xr[k] - mean) * inv, d = dyr[k];
      sumD += d * scale[k];
      sumDX += d * scale[k] * xhat;
    }
    for (int64_t k = 0; k < inner; ++k) {
      double xhat = (xr[k] - mean) * inv;
      dx[r * inner + k] = float(inv * (dyr[k] * double(scale[k]) - sumD / inner -
                                       xhat * sumDX / inner));
    }
    means[r] = mean;
    invs[r] = inv;
  });
  dx.commit();
  constexpr int64_t kBlock = 64;
  std::vector<float> ds(inner), db(inner);
#pragma omp parallel for if (xT.size() > kParallelGrain)
  for (int64_t k0 = 0; k0 < inner; k0 += kBlock) {
    int64_t width = std::min(kBlock, inner - k0);
    double dscale[kBlock] = {}, dbias[kBlock] = {};
    for (int64_t r = 0; r < rows; ++r) {
      const float *xr = x.data() + r * inner + k0, *dyr = dy.data() + r * inner + k0;
      for (int64_t k = 0; k < width; ++k) {
        double xhat = (xr[k] - means[r]) * invs[r], d = dyr[k];
        dscale[k] += d * xhat;
        dbias[k] += d;
      }
    }
    for (int64_t k = 0; k < width; ++k) {
      ds[k0 + k] = float(dscale[k]);
      db[k0 + k] = float(dbias[k]);
    }
  }
  fromF32(ds.data(), c.out[1].data, c.out[1].dtype, ds.size());
  fromF32(db.data(), c.out[2].data, c.out[2].dtype, db.size());
}

/// Batch norm's dx, dscale and dbias over all but the channel axis (NCHW;
/// NHWC has a loop of its own above).
void batchNormGradients(KernelContext &c) {
  const TensorRef &xT = c.in[0];
  if (attrStr(c, "layout", "NHWC") == "NHWC")
    return batchNormBackwardChannelsLast(c, xT.size() / xT.shape.back(), xT.shape.back());
  F32In x(xT), dy(c.in[1]), scale(c.in[2]);
  double eps = attrF64(c, "epsilon", 1e-5);
  // Each channel spans outer x inner elements.
  int64_t groups = xT.shape[1], inner = 1;
  for (int64_t d = 2; d < xT.rank(); ++d)
    inner *= xT.shape[d];
  int64_t span = xT.size() / groups;
  auto at = [&](int64_t g, int64_t k) { return ((k / inner) * groups + g) * inner + k % inner; };
  F32Out dx(c.out[0]);
  std::vector<double> dscale(c.in[2].size(), 0.0), dbias(c.in[2].size(), 0.0);
  for (int64_t g = 0; g < groups; ++g) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < span; ++k)
      mean += x[at(g, k)];
    mean /= span;
    for (int64_t k = 0; k < span; ++k)
      var += (x[at(g, k)] - mean) * (x[at(g, k)] - mean);
    var /= span;
    double inv = 1.0 / std::sqrt(var + eps), sumD = 0, sumDX = 0, s = scale[g];
    for (int64_t k = 0; k < span; ++k) {
      double xhat = (x[at(g, k)] - mean) * inv, d = dy[at(g, k)];
      sumD += d * s;
      sumDX += d * s * xhat;
      dscale[g] += d * xhat;
      dbias[g] += d;
    }
    for (int64_t k = 0; k < span; ++k) {
      double xhat = (x[at(g, k)] - mean) * inv;
      dx[at(g, k)] = float(inv * (dy[at(g, k)] * s - sumD / span - xhat * sumDX / span));
    }
  }
  dx.commit();
  std::vector<float> ds(dscale.begin(), dscale.end()), db(dbias.begin(), dbias.end());
  fromF32(ds.data(), c.out[1].data, c.out[1].dtype, ds.size());
  fromF32(db.data(), c.out[2].data, c.out[2].dtype, db.size());
}

/// With a fourth input (a residual gradient's sum joined: docs/runtime.md,
/// "Residual gradients"), dy is input 1 plus input 3, rounded to `dy_dtype`
/// as the add stored it.
void layerNormBackward(KernelContext &c) {
  DyAddend addend = dyAddendOf(c.step, c.attrs);
  if (addend.operand < 0)
    return layerNormGradients(c);
  int64_t n = c.in[1].size();
  F32In a(c.in[1]), b(c.in[addend.operand]);
  std::vector<float> dy(n);
  for (int64_t i = 0; i < n; ++i)
    dy[i] = a[i] + b[i];
  roundIn(dy.data(), addend.dtype, n);
  KernelContext summed = c;
  summed.in[1] = TensorRef{dy.data(), DType::F32, c.in[1].shape};
  layerNormGradients(summed);
}

/// With activation relu, dy is the relu's backward of the incoming gradient
/// (input 1) at the relu's result (input 3), rounded to the gradient's dtype.
void batchNormBackward(KernelContext &c) {
  NormRelu relu = normReluOf(c.step, c.attrs);
  if (!relu.relu)
    return batchNormGradients(c);
  int64_t n = c.in[1].size();
  F32In dz(c.in[1]), z(c.in[relu.operand]);
  std::vector<float> dy(n);
  for (int64_t i = 0; i < n; ++i)
    dy[i] = dz[i] * num::Relu{}.derivative(z[i], z[i]);
  roundIn(dy.data(), c.in[1].dtype, n);
  KernelContext masked = c;
  masked.in[1] = TensorRef{dy.data(), DType::F32, c.in[1].shape};
  batchNormGradients(masked);
}

} // namespace

void addNormKernels(KernelTable &t) {
  t[Kernel::BatchNorm] = batchNorm;
  t[Kernel::LayerNorm] = withRoundedCopy<layerNorm, 1>;
  t[Kernel::BatchNormBackward] = batchNormBackward;
  t[Kernel::LayerNormBackward] = withRoundedCopy<layerNormBackward, 3>;
}

} // namespace ampc::rt
