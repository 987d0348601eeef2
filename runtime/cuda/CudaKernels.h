// CUDA kernels: one host function per plan kernel, which queues its launches
// (or library calls) on the device's stream and never waits for the device.
// Element math comes from runtime/numerics, as on the CPU; the files are
// built with --fmad=false, so element ops give the CPU's bits.
#ifndef AMPC_RUNTIME_CUDA_CUDAKERNELS_H
#define AMPC_RUNTIME_CUDA_CUDAKERNELS_H

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/StepVariants.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/device/BackendSkeleton.h"

namespace ampc::rt::cuda {

/// A step as a CUDA kernel function sees it: the shared KernelContext
/// (runtime/device/BackendSkeleton.h) and what queuing its launches needs.
struct LaunchContext : KernelContext {
  CudaDevice &device;
  /// Device memory a kernel keeps for its step (a multi-tensor list),
  /// filled at its first run, before any capture.
  DeviceMemory state;
  /// Host objects a kernel keeps for its step (library descriptors, the
  /// chosen algorithm), made at its first run.
  std::shared_ptr<void> cache;
  /// Time the GEMM's candidate algorithms at the first run (Matmul.cu).
  bool tuneGemms = false;
  cudaStream_t stream() const { return device.stream(); }
};

using KernelFn = void (*)(LaunchContext &);
/// The CUDA kernel functions, filled by the add*Kernels below.
using KernelTable = KernelRegistry<KernelFn>;
const KernelTable &kernels();

void addElementwiseKernels(KernelTable &t);
void addUnaryKernels(KernelTable &t);
void addElementChainKernels(KernelTable &t);
void addMovementKernels(KernelTable &t);
void addMatmulKernels(KernelTable &t);
void addLossKernels(KernelTable &t);
void addTrainingKernels(KernelTable &t);
void addAverageKernels(KernelTable &t);
void addLambKernels(KernelTable &t);
void addSoftmaxKernels(KernelTable &t);
void addAttentionKernels(KernelTable &t);
void addFp8Kernels(KernelTable &t);
void addReduceKernels(KernelTable &t);
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
const Entry *uploadOnce(LaunchContext &c, DeviceMemory &table, const std::vector<Entry> &entries) {
  if (!table) {
    size_t bytes = entries.size() * sizeof(Entry);
    table = c.device.allocate((int64_t)bytes, 256);
    AMPC_CUDA_CHECK(
        cudaMemcpyAsync(table.get(), entries.data(), bytes, cudaMemcpyHostToDevice, c.stream()));
    AMPC_CUDA_CHECK(cudaStreamSynchronize(c.stream()));
  }
  return reinterpret_cast<const Entry *>(table.get());
}

/// Multi-tensor updates (TrainingMultiTensor.cu): whether `kernel` may run grouped,
/// whether `next` may join the group `first` starts, and a group's launch
/// (`table`: its tensor list on the device, made at the first run).
bool isGroupedUpdate(Kernel kernel);
bool joinsUpdateGroup(const LaunchContext &first, const LaunchContext &next);
void runUpdateGroup(const std::vector<LaunchContext *> &members, DeviceMemory &table);

/// A part of the `check_finite` step `c` (runtime/core/EarlyChecks.h), on
/// `stream`: its inputs `inputs`, their list kept in `table` from the first
/// run, setting `found` where one is not finite; `first` clears `found`
/// before (Training.cu).
void checkFinitePart(LaunchContext &c, const std::vector<int> &inputs, uint8_t *found, bool first,
                     DeviceMemory &table, cudaStream_t stream);

/// Grouped copies (TrainingMultiCopy.cu): whether `next` may join the group of
/// same-dtype assigns or restores that `first` starts, and its launch.
bool joinsCopyGroup(const LaunchContext &first, const LaunchContext &next);
void runCopyGroup(const std::vector<LaunchContext *> &members, DeviceMemory &table);

/// Result 0 of a step with `results` results, and the rounded copy of it
/// that the step may carry as one more output (kRoundedCopy).
inline ResultAndCopy resultAndCopy(const LaunchContext &c, size_t results) {
  View none{};
  return {viewOf(c.out[0]), c.out.size() > results ? viewOf(c.out[results]) : none};
}

/// y[col] = the sum over rows of x viewed as [rows, y.size] (x.size a
/// multiple of y.size, y not empty): reduce_to's column sums (Elementwise.cu).
void sumColumns(LaunchContext &c, const TensorRef &x, const TensorRef &y);

/// Completes the epilogue of a GEMM step whose cuBLASLt epilogue had no
/// algorithm, after a plain GEMM (MatmulFallback.cu).
void finishEpilogue(LaunchContext &c);

/// Checks a launch just queued (a bad configuration shows at once).
inline void launched(const LaunchContext &c) {
  cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess)
    c.fail(std::string("launch failed: ") + cudaGetErrorString(status));
}

} // namespace ampc::rt::cuda

#endif
