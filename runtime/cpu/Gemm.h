// The CPU kernels' one GEMM entry point (OpenBLAS's sgemm, its OpenMP build).
#ifndef AMPC_RUNTIME_CPU_GEMM_H
#define AMPC_RUNTIME_CPU_GEMM_H

#include <cstdint>

namespace ampc::rt {

/// C = op(A) · op(B), or C += op(A) · op(B) with `accumulate`; row-major f32,
/// op transposes when asked; C is m x n, the inner dimension k. Empty sizes
/// are fine: k = 0 gives C = 0 (or leaves it, accumulating).
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k, const float *a,
          int64_t lda, const float *b, int64_t ldb, float *c, int64_t ldc,
          bool accumulate = false);

} // namespace ampc::rt

#endif
