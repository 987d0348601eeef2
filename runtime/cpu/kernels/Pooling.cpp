// max_pool2d, avg_pool2d (padding not counted) and global_avg_pool, in NHWC
// or NCHW, and the backward of max and avg pooling.
#include <cmath>
#include <limits>

#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

struct Layout {
  int64_t n, c, h, w;       // sizes
  int64_t sn, sc, sh, sw;   // strides
};

Layout layoutOf(const TensorRef &t, bool nhwc) {
  Layout l;
  l.n = t.dim(0);
  l.c = nhwc ? t.dim(3) : t.dim(1);
  l.h = nhwc ? t.dim(1) : t.dim(2);
  l.w = nhwc ? t.dim(2) : t.dim(3);
  l.sn = l.c * l.h * l.w;
  l.sc = nhwc ? 1 : l.h * l.w;
  l.sh = nhwc ? l.w * l.c : l.w;
  l.sw = nhwc ? l.c : 1;
  return l;
}

template <bool Max> void pool(KernelContext &c) {
  bool nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
  std::vector<int64_t> k = attrInts(c, "kernel"), st = attrInts(c, "strides", k),
                       pad = attrInts(c, "padding", {0, 0});
  int64_t pt = pad[0], pl = pad.size() == 4 ? pad[2] : pad[1];
  Layout in = layoutOf(c.in[0], nhwc), out = layoutOf(c.out[0], nhwc);
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  int64_t pixels = out.n * out.h * out.w;
  // Each output pixel: the window's valid cells, reduced over every channel
  // (contiguous in NHWC: the inner loop vectorises).
#pragma omp parallel for if (c.out[0].size() > kParallelGrain)
  for (int64_t p = 0; p < pixels; ++p) {
    int64_t n = p / (out.h * out.w), oy = (p / out.w) % out.h, ox = p % out.w;
    std::vector<float> acc(out.c, Max ? -std::numeric_limits<float>::infinity() : 0.0f);
    int64_t count = 0;
    for (int64_t ky = 0; ky < k[0]; ++ky)
      for (int64_t kx = 0; kx < k[1]; ++kx) {
        int64_t iy = oy * st[0] - pt + ky, ix = ox * st[1] - pl + kx;
        if (iy < 0 || iy >= in.h || ix < 0 || ix >= in.w)
          continue;
        const float *src = x.data() + n * in.sn + iy * in.sh + ix * in.sw;
        ++count;
        for (int64_t ch = 0; ch < out.c; ++ch) {
          float v = src[ch * in.sc];
          acc[ch] = Max ? (v > acc[ch] || v != v ? v : acc[ch]) : acc[ch] + v;
        }
      }
    float *dst = y.data() + n * out.sn + oy * out.sh + ox * out.sw;
    for (int64_t ch = 0; ch < out.c; ++ch)
      dst[ch * out.sc] = Max ? acc[ch] : acc[ch] / std::max<int64_t>(count, 1);
  }
  y.commit();
}

void globalAvgPool(KernelContext &c) {
  bool nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
  Layout in = layoutOf(c.in[0], nhwc);
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  for (int64_t n = 0; n < in.n; ++n)
    for (int64_t ch = 0; ch < in.c; ++ch) {
      double sum = 0;
      for (int64_t iy = 0; iy < in.h; ++iy)
        for (int64_t ix = 0; ix < in.w; ++ix)
          sum += x[n * in.sn + ch * in.sc + iy * in.sh + ix * in.sw];
      y[n * in.c + ch] = float(sum / double(in.h * in.w));
    }
  y.commit();
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

} // namespace

void addPoolingKernels(KernelTable &t) {
  t[Kernel::MaxPool2d] = pool<true>;
  t[Kernel::AvgPool2d] = pool<false>;
  t[Kernel::GlobalAvgPool] = globalAvgPool;

  t[Kernel::MaxPool2dBackward] = poolBackward<true>;
  t[Kernel::AvgPool2dBackward] = poolBackward<false>;
}

} // namespace ampc::rt
