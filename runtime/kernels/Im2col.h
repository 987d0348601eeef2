// im2col / col2im rows of NHWC convolutions, shared by conv2d and its
// backward kernels.
#ifndef AMPC_RUNTIME_KERNELS_IM2COL_H
#define AMPC_RUNTIME_KERNELS_IM2COL_H

#include <algorithm>
#include <cstdint>

namespace ampc::rt {

struct ConvShape {
  int64_t n, h, w, c, cout, kh, kw, oh, ow, groups;
  int64_t sh, sw, dh, dw, pt, pl;
};

/// One im2col row: the receptive field of output pixel (oy, ox) of `image`
/// for group `g`, in (ky, kx, channel) order, zeros outside the image. With
/// one group and no horizontal dilation, a filter row is one contiguous copy.
inline void im2colRow(const ConvShape &s, const float *x, int64_t g, int64_t image, int64_t oy,
               int64_t ox, float *dst) {
  int64_t cg = s.c / s.groups, rowLen = s.kw * cg;
  int64_t ix0 = ox * s.sw - s.pl;
  for (int64_t ky = 0; ky < s.kh; ++ky, dst += rowLen) {
    int64_t iy = oy * s.sh - s.pt + ky * s.dh;
    if (iy < 0 || iy >= s.h) {
      std::fill(dst, dst + rowLen, 0.0f);
      continue;
    }
    const float *line = x + (image * s.h + iy) * s.w * s.c;
    if (s.groups == 1 && s.dw == 1) {
      int64_t first = std::max<int64_t>(0, -ix0), last = std::min<int64_t>(s.kw, s.w - ix0);
      std::fill(dst, dst + first * cg, 0.0f);
      if (last > first)
        std::copy(line + (ix0 + first) * s.c, line + (ix0 + last) * s.c, dst + first * cg);
      std::fill(dst + std::max(last, first) * cg, dst + rowLen, 0.0f);
      continue;
    }
    for (int64_t kx = 0; kx < s.kw; ++kx) {
      int64_t ix = ix0 + kx * s.dw;
      float *out = dst + kx * cg;
      if (ix < 0 || ix >= s.w)
        std::fill(out, out + cg, 0.0f);
      else
        std::copy(line + ix * s.c + g * cg, line + ix * s.c + (g + 1) * cg, out);
    }
  }
}

/// Images per im2col chunk: about 4M floats of columns, and at least two
/// chunks per thread when there are enough images.
inline int64_t imagesPerChunk(const ConvShape &s, int64_t cols, int64_t threads) {
  int64_t rows = s.oh * s.ow;
  int64_t budget = std::max<int64_t>(1, (4 << 20) / std::max<int64_t>(1, rows * cols));
  return std::max<int64_t>(1, std::min(budget, (s.n + 2 * threads - 1) / (2 * threads)));
}

/// The reverse of im2colRow: adds a row of column gradients back into the
/// image gradient `dx` (NHWC).
inline void col2imRow(const ConvShape &s, const float *src, int64_t g, int64_t image,
                      int64_t oy, int64_t ox, float *dx) {
  int64_t cg = s.c / s.groups, rowLen = s.kw * cg;
  int64_t ix0 = ox * s.sw - s.pl;
  for (int64_t ky = 0; ky < s.kh; ++ky, src += rowLen) {
    int64_t iy = oy * s.sh - s.pt + ky * s.dh;
    if (iy < 0 || iy >= s.h)
      continue;
    float *line = dx + (image * s.h + iy) * s.w * s.c;
    for (int64_t kx = 0; kx < s.kw; ++kx) {
      int64_t ix = ix0 + kx * s.dw;
      if (ix < 0 || ix >= s.w)
        continue;
      float *dst = line + ix * s.c + g * cg;
      const float *from = src + kx * cg;
      for (int64_t ch = 0; ch < cg; ++ch)
        dst[ch] += from[ch];
    }
  }
}

} // namespace ampc::rt

#endif
