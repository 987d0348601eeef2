// Backward kernels of conv2d (input and filter), max/avg pooling, batch norm
// and layer norm. NCHW goes through NHWC, as in the forward kernels.
#include <cblas.h>
#include <omp.h>
#include <cmath>
#include <limits>

#include "runtime/kernels/Im2col.h"
#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

/// An f32 view of a 4-D operand in NHWC (OHWI for filters): its own data, or
/// a permuted copy when the op's layout is NCHW.
class NhwcIn {
public:
  NhwcIn(const TensorRef &t, bool nhwc, DType roundTo = DType::F32)
      : in_(t, roundTo), p_(in_.data()) {
    if (!nhwc) {
      copy_ = permute(p_, t.shape, kToNhwc);
      p_ = copy_.data();
    }
  }
  const float *data() const { return p_; }

private:
  F32In in_;
  std::vector<float> copy_;
  const float *p_;
};

void convBackwardInput(KernelContext &c) {
  const TensorRef &dyT = c.in[0], &fT = c.in[1], &dxT = c.out[0];
  ConvShape s = convShapeOf(c, dxT.shape, fT.shape, dyT.shape);
  NhwcIn dyIn(dyT, s.nhwc), fIn(fT, s.nhwc, roundedInput(c, 1));
  const float *dy = dyIn.data(), *f = fIn.data();
  int64_t cg = s.c / s.groups, coutg = s.cout / s.groups, cols = s.kh * s.kw * cg,
          rows = s.oh * s.ow, chunk = imagesPerChunk(s, cols, omp_get_max_threads()),
          chunks = (s.n + chunk - 1) / chunk;
  std::vector<float> dx(dxT.size(), 0.0f);
  // Chunks hold whole images, so their col2im writes never overlap.
#pragma omp parallel
  {
    std::vector<float> dcol(chunk * rows * cols);
#pragma omp for schedule(dynamic)
    for (int64_t ci = 0; ci < chunks; ++ci) {
      int64_t n0 = ci * chunk, images = std::min(chunk, s.n - n0), r0 = n0 * rows;
      for (int64_t g = 0; g < s.groups; ++g) {
        // dcol = dy_g [images*rows, coutg] x filter_g [coutg, cols]
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, images * rows, cols, coutg, 1.0f,
                    dy + r0 * s.cout + g * coutg, s.cout, f + g * coutg * cols, cols, 0.0f,
                    dcol.data(), cols);
        col2imImages(s, dcol.data(), g, n0, images, dx.data());
      }
    }
  }
  if (!s.nhwc)
    dx = permute(dx.data(), {s.n, s.h, s.w, s.c}, kToNchw);
  fromF32(dx.data(), dxT.data, dxT.dtype, dx.size());
}

void convBackwardFilter(KernelContext &c) {
  const TensorRef &xT = c.in[0], &dyT = c.in[1], &dfT = c.out[0];
  ConvShape s = convShapeOf(c, xT.shape, dfT.shape, dyT.shape);
  NhwcIn xIn(xT, s.nhwc), dyIn(dyT, s.nhwc);
  const float *x = xIn.data(), *dy = dyIn.data();
  int64_t cg = s.c / s.groups, coutg = s.cout / s.groups, cols = s.kh * s.kw * cg,
          rows = s.oh * s.ow, chunk = imagesPerChunk(s, cols, omp_get_max_threads()),
          chunks = (s.n + chunk - 1) / chunk;
  std::vector<float> df(s.cout * cols, 0.0f);
  // Each thread sums a fixed (static) share of the chunks into its own
  // gradient; the partial sums are added in thread order, so the result is
  // the same bits on every run (exact resume depends on it).
  std::vector<std::vector<float>> partials(omp_get_max_threads());
#pragma omp parallel
  {
    std::vector<float> col(chunk * rows * cols), &partial = partials[omp_get_thread_num()];
    partial.assign(df.size(), 0.0f);
#pragma omp for schedule(static)
    for (int64_t ci = 0; ci < chunks; ++ci) {
      int64_t n0 = ci * chunk, images = std::min(chunk, s.n - n0), r0 = n0 * rows;
      for (int64_t g = 0; g < s.groups; ++g) {
        im2colImages(s, x, g, n0, images, col.data());
        // partial_g [coutg, cols] += dy_g^T [coutg, rows] x col [rows, cols]
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, coutg, cols, images * rows, 1.0f,
                    dy + r0 * s.cout + g * coutg, s.cout, col.data(), cols, 1.0f,
                    partial.data() + g * coutg * cols, cols);
      }
    }
  }
  for (const std::vector<float> &partial : partials)
    for (size_t i = 0; i < partial.size(); ++i)
      df[i] += partial[i];
  if (!s.nhwc) // [Cout, KH, KW, Cg] -> [Cout, Cg, KH, KW]
    df = permute(df.data(), {s.cout, s.kh, s.kw, cg}, kToNchw);
  fromF32(df.data(), dfT.data, dfT.dtype, df.size());
}

struct Pool {
  std::vector<int64_t> kernel, strides;
  int64_t pt, pl, n, c, h, w, oh, ow;
  int64_t sn, sc, sh, sw, osn, osc, osh, osw;
};

Pool poolOf(const KernelContext &c, const std::vector<int64_t> &x, const std::vector<int64_t> &y) {
  bool nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
  Pool p;
  p.kernel = attrInts(c, "kernel");
  p.strides = attrInts(c, "strides", p.kernel);
  std::vector<int64_t> pad = attrInts(c, "padding", {0, 0});
  p.pt = pad[0];
  p.pl = pad.size() == 4 ? pad[2] : pad[1];
  p.n = x[0];
  p.c = nhwc ? x[3] : x[1];
  p.h = nhwc ? x[1] : x[2];
  p.w = nhwc ? x[2] : x[3];
  p.oh = nhwc ? y[1] : y[2];
  p.ow = nhwc ? y[2] : y[3];
  auto strides = [&](int64_t h, int64_t w, int64_t &sn, int64_t &sc, int64_t &sh, int64_t &sw) {
    sn = p.c * h * w;
    sc = nhwc ? 1 : h * w;
    sh = nhwc ? w * p.c : w;
    sw = nhwc ? p.c : 1;
  };
  strides(p.h, p.w, p.sn, p.sc, p.sh, p.sw);
  strides(p.oh, p.ow, p.osn, p.osc, p.osh, p.osw);
  return p;
}

template <bool Max> void poolBackward(KernelContext &c) {
  const TensorRef &dyT = Max ? c.in[1] : c.in[0], &dxT = c.out[0];
  Pool p = poolOf(c, dxT.shape, dyT.shape);
  std::vector<float> x;
  if (Max) {
    x.resize(c.in[0].size());
    toF32(c.in[0].data, c.in[0].dtype, x.data(), x.size());
  }
  F32In dy(dyT);
  std::vector<float> dx(dxT.size(), 0.0f);
  // Per output pixel, the window is scanned once for every channel (channels
  // are contiguous in NHWC); images run in parallel, so writes never race.
#pragma omp parallel for
  for (int64_t n = 0; n < p.n; ++n) {
    std::vector<int64_t> best(p.c);
    std::vector<float> bestValue(p.c);
    for (int64_t oy = 0; oy < p.oh; ++oy)
      for (int64_t ox = 0; ox < p.ow; ++ox) {
        const float *g = dy.data() + n * p.osn + oy * p.osh + ox * p.osw;
        std::fill(best.begin(), best.end(), -1);
        std::fill(bestValue.begin(), bestValue.end(), -std::numeric_limits<float>::infinity());
        int64_t count = 0;
        for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
          for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
            int64_t iy = oy * p.strides[0] - p.pt + ky, ix = ox * p.strides[1] - p.pl + kx;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
              continue;
            ++count;
            int64_t at = n * p.sn + iy * p.sh + ix * p.sw;
            if (Max)
              for (int64_t ch = 0; ch < p.c; ++ch) {
                float v = x[at + ch * p.sc];
                if (best[ch] < 0 || v > bestValue[ch])
                  best[ch] = at + ch * p.sc, bestValue[ch] = v;
              }
          }
        if (Max) {
          for (int64_t ch = 0; ch < p.c; ++ch)
            if (best[ch] >= 0)
              dx[best[ch]] += g[ch * p.osc];
          continue;
        }
        for (int64_t ky = 0; ky < p.kernel[0]; ++ky)
          for (int64_t kx = 0; kx < p.kernel[1]; ++kx) {
            int64_t iy = oy * p.strides[0] - p.pt + ky, ix = ox * p.strides[1] - p.pl + kx;
            if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
              continue;
            float *d = dx.data() + n * p.sn + iy * p.sh + ix * p.sw;
            for (int64_t ch = 0; ch < p.c; ++ch)
              d[ch * p.sc] += g[ch * p.osc] / float(count);
          }
      }
  }
  fromF32(dx.data(), dxT.data, dxT.dtype, dx.size());
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

/// Shared by batch norm (over all but the channel axis) and layer norm (over
/// the trailing `inner` elements of each row): dx, dscale, dbias.
void normBackward(KernelContext &c, bool batch) {
  const TensorRef &xT = c.in[0];
  if (batch && attrStr(c, "layout", "NHWC") == "NHWC")
    return batchNormBackwardChannelsLast(c, xT.size() / xT.shape.back(), xT.shape.back());
  F32In x(xT), dy(c.in[1]), scale(c.in[2]);
  double eps = attrF64(c, "epsilon", 1e-5);
  int64_t groups, span, outer, inner;
  if (batch) { // groups = channels; each channel spans outer x inner elements
    bool nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
    int64_t axis = nhwc ? xT.rank() - 1 : 1;
    groups = xT.shape[axis];
    inner = 1;
    for (int64_t d = axis + 1; d < xT.rank(); ++d)
      inner *= xT.shape[d];
    outer = xT.size() / (groups * inner);
    span = outer * inner;
  } else { // groups = rows; the scale runs along each row
    int64_t axis = axisOf(attrInt(c, "axis", -1), xT.rank());
    inner = 1;
    for (int64_t d = axis; d < xT.rank(); ++d)
      inner *= xT.shape[d];
    groups = inner ? xT.size() / inner : 0;
    span = inner;
    outer = 1;
  }
  auto at = [&](int64_t g, int64_t k) {
    return batch ? ((k / inner) * groups + g) * inner + k % inner : g * inner + k;
  };
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
    double inv = 1.0 / std::sqrt(var + eps), sumD = 0, sumDX = 0;
    for (int64_t k = 0; k < span; ++k) {
      double xhat = (x[at(g, k)] - mean) * inv, d = dy[at(g, k)];
      double s = batch ? scale[g] : scale[k];
      sumD += d * s;
      sumDX += d * s * xhat;
      if (batch) {
        dscale[g] += d * xhat;
        dbias[g] += d;
      } else {
        dscale[k] += d * xhat;
        dbias[k] += d;
      }
    }
    for (int64_t k = 0; k < span; ++k) {
      double xhat = (x[at(g, k)] - mean) * inv, s = batch ? scale[g] : scale[k];
      dx[at(g, k)] = float(inv * (dy[at(g, k)] * s - sumD / span - xhat * sumDX / span));
    }
  }
  dx.commit();
  std::vector<float> ds(dscale.begin(), dscale.end()), db(dbias.begin(), dbias.end());
  fromF32(ds.data(), c.out[1].data, c.out[1].dtype, ds.size());
  fromF32(db.data(), c.out[2].data, c.out[2].dtype, db.size());
}

} // namespace

void addConvPoolBackwardKernels(KernelTable &t) {
  t["conv2d_backward_input"] = convBackwardInput;
  t["conv2d_backward_filter"] = convBackwardFilter;
  t["max_pool2d_backward"] = poolBackward<true>;
  t["avg_pool2d_backward"] = poolBackward<false>;
  t["batch_norm_backward"] = [](KernelContext &c) { normBackward(c, true); };
  t["layer_norm_backward"] = [](KernelContext &c) { normBackward(c, false); };
}

} // namespace ampc::rt
