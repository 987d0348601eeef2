// matmul and conv2d on OpenBLAS's sgemm; f16/bf16 operands are widened to f32
// first and the f32 result is rounded on output.
#include <cblas.h>
#include <omp.h>

#include "runtime/kernels/Im2col.h"
#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float *c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

void matmul(KernelContext &c) {
  const TensorRef &a = c.in[0], &b = c.in[1], &o = c.out[0];
  bool ta = attrBool(c, "transpose_a", false), tb = attrBool(c, "transpose_b", false);
  int64_t m = o.dim(-2), n = o.dim(-1), k = ta ? a.dim(-2) : a.dim(-1);
  F32In fa(a, roundedInput(c, 0)), fb(b, roundedInput(c, 1));
  F32Out fo(o);
  int64_t lda = ta ? m : k, ldb = tb ? k : n;
  if (b.rank() == 2 && !ta) { // fold a's batch dimensions into the rows
    gemm(false, tb, a.size() / k, n, k, fa.data(), lda, fb.data(), ldb, fo.data(), n);
    fo.commit();
    return;
  }
  std::vector<int64_t> batch(o.shape.begin(), o.shape.end() - 2);
  int64_t batches = numElements(batch);
  auto batchStrides = [&](const TensorRef &t) {
    std::vector<int64_t> dims(t.shape.begin(), t.shape.end() - 2);
    std::vector<int64_t> s(batch.size(), 0), own = stridesOf(dims);
    size_t off = batch.size() - dims.size();
    int64_t matrix = t.dim(-1) * t.dim(-2);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] != 1)
        s[off + i] = own[i] * matrix;
    return s;
  };
  std::vector<int64_t> sa = batchStrides(a), sb = batchStrides(b);
  for (int64_t bi = 0; bi < batches; ++bi) {
    int64_t rest = bi, offA = 0, offB = 0;
    for (int64_t d = (int64_t)batch.size() - 1; d >= 0; --d) {
      int64_t idx = rest % batch[d];
      rest /= batch[d];
      offA += idx * sa[d];
      offB += idx * sb[d];
    }
    gemm(ta, tb, m, n, k, fa.data() + offA, lda, fb.data() + offB, ldb,
         fo.data() + bi * m * n, n);
  }
  fo.commit();
}


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

} // namespace

void addMatrixKernels(KernelTable &t) {
  t["matmul"] = matmul;
  t["conv2d"] = conv2d;
}

} // namespace ampc::rt
