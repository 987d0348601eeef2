// CPU kernels: one function per plan kernel. Low-precision tensors are
// widened to f32, computed in f32, and rounded on output (nearest even), as
// tensor cores do. Element math comes from runtime/numerics.
#ifndef AMPC_RUNTIME_CPU_KERNELS_H
#define AMPC_RUNTIME_CPU_KERNELS_H

#include "runtime/device/BackendSkeleton.h"

namespace ampc::rt {

using KernelFn = void (*)(KernelContext &);
/// The CPU's kernel functions, filled by the add*Kernels below.
using KernelTable = KernelRegistry<KernelFn>;
const KernelTable &kernels();

/// reduce_to's sums: x summed onto y's shape (y broadcasts to x), in double
/// in x's order, rounded once (Elementwise.cpp). The GEMM epilogues' bias
/// gradients sum with it too, for the bits of the unfused reduce_to.
void sumOnto(const TensorRef &x, const TensorRef &y);
/// matmul's product of c.in[0] and c.in[1] (batched, transposed as the
/// attributes say, batches broadcast) in f32, into `product` (Matmul.cpp).
void matmulProduct(KernelContext &c, float *product);
// One file per op family, each forward next to its backward.
void addElementwiseKernels(KernelTable &t);
void addUnaryKernels(KernelTable &t);
void addElementChainKernels(KernelTable &t);
void addMatmulKernels(KernelTable &t);
void addConvKernels(KernelTable &t);
void addMovementKernels(KernelTable &t);
void addPoolingKernels(KernelTable &t);
void addNormKernels(KernelTable &t);
void addReduceKernels(KernelTable &t);
void addSoftmaxKernels(KernelTable &t);
void addAttentionKernels(KernelTable &t);
void addFp8Kernels(KernelTable &t);
void addLossKernels(KernelTable &t);
void addTrainingKernels(KernelTable &t);
void addProbeKernels(KernelTable &t);
void addCollectiveKernels(KernelTable &t);

} // namespace ampc::rt

#endif
