// CPU kernels: one function per op. Low-precision tensors are widened to
// f32, computed in f32, and rounded on output (nearest even), like tensor
// cores do.
#ifndef AMPC_RUNTIME_KERNELS_H
#define AMPC_RUNTIME_KERNELS_H

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "runtime/Plan.h"

namespace ampc::rt {

/// An error while running a step (such as an index out of range).
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct KernelContext {
  const Step &step;
  std::vector<TensorRef> in, out;
  bool training = false;
  uint64_t seed = 0, iteration = 0;
  [[noreturn]] void fail(const std::string &what) const {
    throw RuntimeError("step '" + step.name + "' (" + step.kernel + "): " + what);
  }
};

using KernelFn = void (*)(KernelContext &);

/// The kernel for a plan step's `kernel` name, or null.
KernelFn findKernel(const std::string &name);
/// Every kernel name, sorted.
std::vector<std::string> kernelNames();

using KernelTable = std::map<std::string, KernelFn>;
void addElementwiseKernels(KernelTable &t);
void addMatrixKernels(KernelTable &t);
void addMovementKernels(KernelTable &t);
void addPoolingKernels(KernelTable &t);
void addNormKernels(KernelTable &t);
void addReduceKernels(KernelTable &t);
void addLossKernels(KernelTable &t);
void addBackwardKernels(KernelTable &t);
void addConvPoolBackwardKernels(KernelTable &t);
void addTrainingKernels(KernelTable &t);

} // namespace ampc::rt

#endif
