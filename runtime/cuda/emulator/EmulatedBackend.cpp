// The `cuda-emulated` backend (docs/cuda.md, "The CUDA emulation"): the CUDA
// backend built for the host (hostify.py, Emulator.h, Runtime.cpp,
// CublasLt.cpp, Cudnn.cpp, Nccl.cpp), its own program, device, dispatch,
// kernels and NCCL communicator. Plans compiled for cuda run on it as they are
// (ampc-plan-run PLAN --device cuda-emulated).
#include <memory>

#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/emulator/Emulator.h"
#include "runtime/device/Backend.h"

extern "C" ampc::rt::Backend *ampcCreateCudaBackend();

namespace ampc::rt::cuda {
namespace {

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
  std::unique_ptr<Communicator> deviceCommunicator(Communicator &host) override {
    return cuda_->deviceCommunicator(host);
  }
  std::vector<std::string> kernelNames() const override { return cuda_->kernelNames(); }
  std::unique_ptr<Program> prepare(const Plan &plan, const PlanMemory &memory,
                                   const ExecOptions &options) override {
    return cuda_->prepare(plan, memory, options);
  }

private:
  std::unique_ptr<Backend> cuda_{ampcCreateCudaBackend()};
};

} // namespace
} // namespace ampc::rt::cuda

extern "C" ampc::rt::Backend *ampcCreateCudaEmulatedBackend() {
  return new ampc::rt::cuda::EmulatedBackend();
}
