#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {

const KernelTable &kernels() {
  static const KernelTable t = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addUnaryKernels(t);
    addElementChainKernels(t);
    addMovementKernels(t);
    addMatmulKernels(t);
    addLossKernels(t);
    addTrainingKernels(t);
    addAverageKernels(t);
    addLambKernels(t);
    addSoftmaxKernels(t);
    addAttentionKernels(t);
    addFp8Kernels(t);
    addReduceKernels(t);
    addPoolingKernels(t);
    addNormKernels(t);
    addLayerNormKernels(t);
    addConvKernels(t);
    addProbeKernels(t);
    addCollectiveKernels(t);
    return t;
  }();
  return t;
}

} // namespace ampc::rt::cuda
