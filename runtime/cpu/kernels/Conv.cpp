// conv2d and its backward (input and filter) as im2col + GEMM over chunks
// of images in parallel. NCHW goes through NHWC.
#include <omp.h>

#include "runtime/cpu/Gemm.h"
#include "runtime/cpu/kernels/Im2col.h"
#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

/// NHWC input, [Cout, KH, KW, Cin/groups] filter, NHWC output.
void convNhwc(const ConvShape &s, const float *x, const float *f, float *y) {
  int64_t cg = s.c / s.groups, coutg = s.cout / s.groups, cols = s.kh * s.kw * cg,
          rowsPerImage = s.oh * s.ow;
  bool pointwise = s.kh == 1 && s.kw == 1 && s.sh == 1 && s.sw == 1 && s.pt == 0 &&
                   s.pl == 0 && s.groups == 1;
  if (pointwise) {
    gemm(false, true, s.n * s.h * s.w, s.cout, s.c, x, s.c, f, s.c, y, s.cout);
    return;
  }
  // Chunks of images run in parallel, each with its own im2col buffer and a
  // GEMM that OpenBLAS (OpenMP build) keeps on the calling thread: skinny
  // convolution GEMMs scale better this way than split inside OpenBLAS.
  int64_t chunk = imagesPerChunk(s, cols, omp_get_max_threads());
  int64_t chunks = (s.n + chunk - 1) / chunk;
#pragma omp parallel
  {
    std::vector<float> col(chunk * rowsPerImage * cols);
#pragma omp for schedule(dynamic)
    for (int64_t ci = 0; ci < chunks; ++ci) {
      int64_t n0 = ci * chunk, images = std::min(chunk, s.n - n0), rows = images * rowsPerImage;
      for (int64_t g = 0; g < s.groups; ++g) {
        im2colImages(s, x, g, n0, images, col.data());
        gemm(false, true, rows, coutg, cols, col.data(), cols, f + g * coutg * cols, cols,
             y + n0 * rowsPerImage * s.cout + g * coutg, s.cout);
      }
    }
  }
}

void conv2d(KernelContext &c) {
  const TensorRef &x = c.in[0], &w = c.in[1], &o = c.out[0];
  ConvShape s = convShapeOf(c, x.shape, w.shape, o.shape);
  F32In fx(x, roundedInput(c, 0)), fw(w, roundedInput(c, 1));
  F32Out fo(o);
  if (s.nhwc) {
    convNhwc(s, fx.data(), fw.data(), fo.data());
  } else {
    std::vector<float> xn = permute(fx.data(), x.shape, kToNhwc);
    std::vector<float> wn = permute(fw.data(), w.shape, kToNhwc);
    std::vector<float> yn(o.size());
    convNhwc(s, xn.data(), wn.data(), yn.data());
    std::vector<float> back = permute(yn.data(), {s.n, s.oh, s.ow, s.cout}, kToNchw);
    std::copy(back.begin(), back.end(), fo.data());
  }
  fo.commit();
}

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
        gemm(false, false, images * rows, cols, coutg, dy + r0 * s.cout + g * coutg, s.cout,
             f + g * coutg * cols, cols, dcol.data(), cols);
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
        gemm(true, false, coutg, cols, images * rows, dy + r0 * s.cout + g * coutg, s.cout,
             col.data(), cols, partial.data() + g * coutg * cols, cols, /*accumulate=*/true);
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

} // namespace

void addConvKernels(KernelTable &t) {
  t[Kernel::Conv2d] = conv2d;
  t[Kernel::Conv2dBackwardInput] = convBackwardInput;
  t[Kernel::Conv2dBackwardFilter] = convBackwardFilter;
}

} // namespace ampc::rt
