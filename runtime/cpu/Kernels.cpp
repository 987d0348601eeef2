#include "runtime/cpu/Kernels.h"

namespace ampc::rt {

const KernelTable &kernels() {
  static const KernelTable t = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addUnaryKernels(t);
    addElementChainKernels(t);
    addMatmulKernels(t);
    addConvKernels(t);
    addMovementKernels(t);
    addPoolingKernels(t);
    addNormKernels(t);
    addReduceKernels(t);
    addSoftmaxKernels(t);
    addAttentionKernels(t);
    addFp8Kernels(t);
    addLossKernels(t);
    addTrainingKernels(t);
    addProbeKernels(t);
    addCollectiveKernels(t);
    return t;
  }();
  return t;
}

} // namespace ampc::rt
