#include "runtime/cpu/Gemm.h"

#include <algorithm>

#include <cblas.h>

namespace ampc::rt {

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *a,
          int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0)
    return;
  if (k <= 0) { // an empty sum (BLAS refuses a leading dimension of 0)
    if (!accumulate)
      for (int64_t i = 0; i < m; ++i)
        std::fill(c + i * ldc, c + i * ldc + n, 0.0f);
    return;
  }
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a, lda, b, ldb,
              accumulate ? 1.0f : 0.0f, c, ldc);
}

} // namespace ampc::rt
