// im2col / col2im rows of NHWC convolutions, shared by conv2d and its
// backward kernels.
#ifndef AMPC_RUNTIME_CPU_IM2COL_H
#define AMPC_RUNTIME_CPU_IM2COL_H

#include <algorithm>
#include <cstdint>
#include <vector>

#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {

struct ConvShape {
  int64_t n, h, w, c, cout, kh, kw, oh, ow, groups;
  int64_t sh, sw, dh, dw, pt, pl;
  bool nhwc = true;
};

/// A convolution's sizes from its operands' shapes (input x, filter, output
/// y, in the op's layout) and attributes.
inline ConvShape convShapeOf(const KernelContext &c, const std::vector<int64_t> &x,
                             const std::vector<int64_t> &filter, const std::vector<int64_t> &y) {
  ConvShape s;
  s.nhwc = attrStr(c, "layout", "NHWC") == "NHWC";
  std::vector<int64_t> st = attrInts(c, "strides", {1, 1}), di = attrInts(c, "dilations", {1, 1}),
                       pad = attrInts(c, "padding", {0, 0});
  s.groups = attrInt(c, "groups", 1);
  s.n = x[0];
  s.h = s.nhwc ? x[1] : x[2];
  s.w = s.nhwc ? x[2] : x[3];
  s.c = s.nhwc ? x[3] : x[1];
  s.cout = filter[0];
  s.kh = s.nhwc ? filter[1] : filter[2];
  s.kw = s.nhwc ? filter[2] : filter[3];
  s.oh = s.nhwc ? y[1] : y[2];
  s.ow = s.nhwc ? y[2] : y[3];
  s.sh = st[0], s.sw = st[1], s.dh = di[0], s.dw = di[1];
  s.pt = pad[0];
  s.pl = pad.size() == 4 ? pad[2] : pad[1];
  return s;
}

/// Layout permutations for NCHW operands.
constexpr int kToNhwc[4] = {0, 2, 3, 1}, kToNchw[4] = {0, 3, 1, 2};

/// A 4-D f32 permutation: out dimension i is in dimension p[i].
inline std::vector<float> permute(const float *in, const std::vector<int64_t> &shape,
                                  const int p[4]) {
  std::vector<int64_t> s = stridesOf(shape);
  std::vector<float> out(numElements(shape));
  int64_t i = 0;
  for (int64_t a = 0; a < shape[p[0]]; ++a)
    for (int64_t b = 0; b < shape[p[1]]; ++b)
      for (int64_t c = 0; c < shape[p[2]]; ++c)
        for (int64_t d = 0; d < shape[p[3]]; ++d)
          out[i++] = in[a * s[p[0]] + b * s[p[1]] + c * s[p[2]] + d * s[p[3]]];
  return out;
}

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

/// im2col rows of `images` whole images from `first` on, group `g`:
/// [images * OH * OW, KH * KW * Cg] into `col`.
inline void im2colImages(const ConvShape &s, const float *x, int64_t g, int64_t first,
                         int64_t images, float *col) {
  int64_t rows = s.oh * s.ow, cols = s.kh * s.kw * (s.c / s.groups);
  for (int64_t r = 0; r < images * rows; ++r)
    im2colRow(s, x, g, first + r / rows, (r % rows) / s.ow, r % s.ow, col + r * cols);
}

/// The reverse of im2colImages: adds the column gradients back into `dx`.
inline void col2imImages(const ConvShape &s, const float *dcol, int64_t g, int64_t first,
                         int64_t images, float *dx) {
  int64_t rows = s.oh * s.ow, cols = s.kh * s.kw * (s.c / s.groups);
  for (int64_t r = 0; r < images * rows; ++r)
    col2imRow(s, dcol + r * cols, g, first + r / rows, (r % rows) / s.ow, r % s.ow, dx);
}

} // namespace ampc::rt

#endif
