// CUDA kernels: one host function per plan kernel, which queues its launches
// (or library calls) on the device's stream and never waits for the device.
// Element math comes from runtime/numerics, as on the CPU; the files are
// built with --fmad=false, so element ops give the CPU's bits.
#ifndef AMPC_RUNTIME_CUDA_CUDAKERNELS_H
#define AMPC_RUNTIME_CUDA_CUDAKERNELS_H

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/StepAttrs.h"
#include "runtime/device/Communicator.h"
#include "runtime/cuda/CudaDevice.h"

namespace ampc::rt::cuda {

/// One prepared step: decoded attributes, bound tensors, the device.
struct KernelContext {
  const Step &step;
  StepAttrs attrs;
  std::vector<TensorRef> in, out;
  bool training;
  uint64_t seed;
  int index; // the step's position, for errors reported from the device
  CudaDevice &device;
  /// Device memory a kernel keeps for its step (a multi-tensor list),
  /// filled at its first run, before any capture.
  DeviceMemory state;
  /// Host objects a kernel keeps for its step (library descriptors, the
  /// chosen algorithm), made at its first run.
  std::shared_ptr<void> cache;
  /// The ranks `all_reduce` sums over (null: one rank).
  Communicator *communicator = nullptr;
  /// Time the GEMM's candidate algorithms at the first run (Matmul.cu).
  bool tuneGemms = false;
  cudaStream_t stream() const { return device.stream(); }
  [[noreturn]] void fail(const std::string &what) const {
    throw RuntimeError("step '" + step.name + "' (" + step.kernel + "): " + what);
  }
};

using KernelFn = void (*)(KernelContext &);
using KernelTable = std::map<std::string, KernelFn>;

/// The CUDA kernel for a plan kernel's name, or null; every name, sorted.
KernelFn findKernel(const std::string &name);
std::vector<std::string> kernelNames();

void addElementwiseKernels(KernelTable &t);
void addUnaryKernels(KernelTable &t);
void addElementChainKernels(KernelTable &t);
void addMovementKernels(KernelTable &t);
void addMatmulKernels(KernelTable &t);
void addLossKernels(KernelTable &t);
void addTrainingKernels(KernelTable &t);
void addSoftmaxKernels(KernelTable &t);
void addPoolingKernels(KernelTable &t);
void addNormKernels(KernelTable &t);
void addLayerNormKernels(KernelTable &t);
void addConvKernels(KernelTable &t);
void addProbeKernels(KernelTable &t);
void addCollectiveKernels(KernelTable &t);

/// A multi-tensor list uploaded to `table` at the step's first run, before
/// any capture (the host waits for the copy, so `entries` may go then), and
/// the list on the device.
template <typename Entry>
const Entry *uploadOnce(KernelContext &c, DeviceMemory &table, const std::vector<Entry> &entries) {
  if (!table) {
    size_t bytes = entries.size() * sizeof(Entry);
    table = c.device.allocate((int64_t)bytes, 256);
    AMPC_CUDA_CHECK(
        cudaMemcpyAsync(table.get(), entries.data(), bytes, cudaMemcpyHostToDevice, c.stream()));
    AMPC_CUDA_CHECK(cudaStreamSynchronize(c.stream()));
  }
  return reinterpret_cast<const Entry *>(table.get());
}

/// Multi-tensor updates (MultiTensor.cu): whether `kernel` may run grouped,
/// whether `next` may join the group `first` starts, and a group's launch
/// (`table`: its tensor list on the device, made at the first run).
bool isGroupedUpdate(const std::string &kernel);
bool joinsUpdateGroup(const KernelContext &first, const KernelContext &next);
void runUpdateGroup(const std::vector<KernelContext *> &members, DeviceMemory &table);

/// A part of the `check_finite` step `c` (runtime/core/EarlyChecks.h), on
/// `stream`: its inputs `inputs`, their list kept in `table` from the first
/// run, setting `found` where one is not finite; `first` clears `found`
/// before (Training.cu).
void checkFinitePart(KernelContext &c, const std::vector<int> &inputs, uint8_t *found, bool first,
                     DeviceMemory &table, cudaStream_t stream);

/// Grouped copies (MultiCopy.cu): whether `next` may join the group of
/// same-dtype assigns or restores that `first` starts, and its launch.
bool joinsCopyGroup(const KernelContext &first, const KernelContext &next);
void runCopyGroup(const std::vector<KernelContext *> &members, DeviceMemory &table);

/// Result 0 of a step with `results` results, and the rounded copy of it
/// that the step may carry as one more output (kRoundedCopy).
inline ResultAndCopy resultAndCopy(const KernelContext &c, size_t results) {
  View none{};
  return {viewOf(c.out[0]), c.out.size() > results ? viewOf(c.out[results]) : none};
}

/// y[col] = the sum over rows of x viewed as [rows, y.size] (x.size a
/// multiple of y.size, y not empty): reduce_to's column sums (Elementwise.cu).
void sumColumns(KernelContext &c, const TensorRef &x, const TensorRef &y);

/// Completes the epilogue of a GEMM step whose cuBLASLt epilogue had no
/// algorithm, after a plain GEMM (MatmulFallback.cu).
void finishEpilogue(KernelContext &c);

/// Checks a launch just queued (a bad configuration shows at once).
inline void launched(const KernelContext &c) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    c.fail(std::string("launch failed: ") + cudaGetErrorString(status));
}

} // namespace ampc::rt::cuda

#endif
