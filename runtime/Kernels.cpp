#include "runtime/Kernels.h"

namespace ampc::rt {

static const KernelTable &table() {
  static const KernelTable t = [] {
    KernelTable t;
    addElementwiseKernels(t);
    addMatrixKernels(t);
    addMovementKernels(t);
    addPoolingKernels(t);
    addNormKernels(t);
    addReduceKernels(t);
    addLossKernels(t);
    addBackwardKernels(t);
    addConvPoolBackwardKernels(t);
    addTrainingKernels(t);
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
