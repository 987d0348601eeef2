// fp8_matmul through cuBLASLt's FP8 GEMM (Fp8Gemm.cu), for Fp8.cu.
#ifndef AMPC_RUNTIME_CUDA_KERNELS_FP8GEMM_H
#define AMPC_RUNTIME_CUDA_KERNELS_FP8GEMM_H

#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {

/// Runs the step as one cuBLASLt FP8 GEMM where it can: the TN layout
/// (a [.., M, K] not transposed, b [N, K] transposed, as compiler/plan/
/// Fp8Layouts.cpp leaves graph-fp8's GEMMs), M, N and K multiples of 16.
/// Returns false, having queued nothing, where it cannot (then the plain
/// loop runs). AMPC_CUDA_FP8_LOOP=1 keeps every step on the loop.
bool fp8GemmLt(LaunchContext &c);

} // namespace ampc::rt::cuda

#endif
