// The `cuda-emulated` backend (docs/cuda.md, "The CUDA emulation"): the CUDA
// backend built for the host (hostify.py, Emulator.h, Runtime.cpp,
// CublasLt.cpp), its own program, device, dispatch and kernels, with the
// CPU's kernels standing in where CUDA's call a library the emulation does
// not have: cuDNN's convolutions (and fp8_matmul takes CUDA's own loop, not
// cuBLASLt's FP8 GEMM). Plans compiled for cuda run on it as they are
// (ampc-plan-run PLAN --device cuda-emulated).
#include <memory>

#include "runtime/cpu/Kernels.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/emulator/Emulator.h"
#include "runtime/cuda/kernels/Fp8Gemm.h"
#include "runtime/device/Backend.h"

extern "C" ampc::rt::Backend *ampcCreateCudaBackend();

namespace ampc::rt::cuda {
namespace {

/// The CPU's function of the step's kernel, on the host memory that is the
/// emulation's device memory; queued as a launch is, so that a graph
/// captures it.
void onCpu(LaunchContext &c) {
  emu::submit([&c] { rt::kernels().find(c.step.kernel)(c); });
}

class EmulatedBackend : public Backend {
public:
  std::string name() const override { return "cuda-emulated"; }
  const Target &target() const override { return cudaTarget(); }
  /// Plans for cuda, and for cuda renamed to this backend (the backend
  /// check names the candidate's target after it).
  bool accepts(const Target &plan) const override {
    Target asCuda = plan;
    if (asCuda.name == name())
      asCuda.name = cudaTarget().name;
    return asCuda == cudaTarget();
  }
  Device &device() override { return cuda_->device(); }
  std::vector<std::string> kernelNames() const override { return cuda_->kernelNames(); }
  std::unique_ptr<Program> prepare(const Plan &plan, const PlanMemory &memory,
                                   const ExecOptions &options) override {
    return cuda_->prepare(plan, memory, options);
  }

private:
  std::unique_ptr<Backend> cuda_{ampcCreateCudaBackend()};
};

} // namespace

// cuDNN's convolutions: the CPU's kernels stand in.
void addConvKernels(KernelTable &t) {
  for (Kernel k : {Kernel::Conv2d, Kernel::Conv2dBackwardInput, Kernel::Conv2dBackwardFilter})
    t[k] = onCpu;
}
bool fp8GemmLt(LaunchContext &) { return false; }
std::unique_ptr<Communicator> ncclCommunicator(Communicator &, cudaStream_t) {
  throw RuntimeError("--device cuda-emulated: one rank only (no NCCL on the host)");
}

} // namespace ampc::rt::cuda

extern "C" ampc::rt::Backend *ampcCreateCudaEmulatedBackend() {
  return new ampc::rt::cuda::EmulatedBackend();
}
