// max_pool2d, avg_pool2d (padding not counted) and global_avg_pool, in NHWC
// or NCHW.
#include <cmath>
#include <limits>

#include "runtime/kernels/KernelUtil.h"

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

} // namespace

void addPoolingKernels(KernelTable &t) {
  t["max_pool2d"] = pool<true>;
  t["avg_pool2d"] = pool<false>;
  t["global_avg_pool"] = globalAvgPool;
}

} // namespace ampc::rt
