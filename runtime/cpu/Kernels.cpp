#include "runtime/cpu/Kernels.h"

namespace ampc::rt {

static const KernelTable &table() {
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
    addLossKernels(t);
    addTrainingKernels(t);
    addProbeKernels(t);
    addCollectiveKernels(t);
    return t;
  }();
  return t;
}

KernelFn findKernel(const std::string &name) {
  auto it = table().find(name);
  return it == table().end() ? nullptr : it->second;
}

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const auto &[name, fn] : table())
    names.push_back(name);
  return names;
}

} // namespace ampc::rt
