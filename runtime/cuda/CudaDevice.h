// The CUDA device: cudaMalloc'd memory, one stream on which every kernel of a
// step is queued, uploads staged on a second stream so that a batch's copy
// overlaps the previous step, event timers, scratch memory (cuBLASLt's and
// cuDNN's workspaces), the library handles, and a device word where kernels
// report errors (an id out of range) without a host synchronisation;
// synchronize() raises them. It counts every time the host waits.
#ifndef AMPC_RUNTIME_CUDA_CUDADEVICE_H
#define AMPC_RUNTIME_CUDA_CUDADEVICE_H

#include <cublasLt.h>
#include <cudnn.h>

#include <array>
#include <string>
#include <vector>

#include "runtime/cuda/CudaCommon.h"
#include "runtime/device/Device.h"

namespace ampc::rt::cuda {

/// Errors kernels report in the device's error word: code and step index.
enum ErrorCode : int32_t {
  kIndexOutOfRange = 1,
  kLabelOutOfRange = 2,
  kDivisionByZero = 3,
  kDivisionOverflow = 4,
};

/// Reports error `code` of step `step` (the first report wins).
__device__ inline void reportError(int32_t *word, int step, ErrorCode code) {
  atomicCAS(word, 0, (step << 8) | code);
}

class CudaDevice : public Device {
public:
  /// Takes device 0; throws RuntimeError saying why there is none.
  CudaDevice();
  ~CudaDevice() override;
  std::string name() const override { return name_; }
  /// The compute capability as major * 10 + minor (90: Hopper).
  int capability() const { return capability_; }
  /// The most shared memory a block may ask for (opting in above 48 KiB).
  size_t sharedPerBlock() const { return sharedPerBlock_; }
  DeviceMemory allocate(int64_t bytes, int64_t alignment) override;
  void upload(std::byte *device, const void *host, size_t bytes) override;
  void download(void *host, const std::byte *device, size_t bytes) override;
  void copy(std::byte *dst, const std::byte *src, size_t bytes) override;
  void synchronize() override;
  std::unique_ptr<Timer> timer() override;
  std::byte *scratch(size_t bytes) override;
  DeviceStats stats() const override { return {peakBytes_, hostSyncs_, stagingWaits_}; }

  cudaStream_t stream() const { return stream_; }
  cublasLtHandle_t blasLt() const { return blasLt_; }
  cudnnHandle_t dnn();
  /// The device word kernels write errors to: (step index << 8) | code.
  int32_t *errorWord() const { return errorWord_; }
  /// Names the steps, for the messages of reported errors.
  void setStepNames(std::vector<std::string> names) { stepNames_ = std::move(names); }
  /// Counts one wait of the host until the device's queue is done.
  void countSync() { ++hostSyncs_; }
  /// Keeps the stream busy for `ms` (a spinning kernel): what the host
  /// queues meanwhile then runs back to back, as from a graph, so event
  /// times measure kernels and not the host's launches.
  void hold(double ms);

private:
  /// An upload's way: host bytes -> pinned `host` (memcpy) -> `device`
  /// staging (copy stream, then `copied`) -> the destination (the compute
  /// stream, after `copied`; then `consumed`).
  struct UploadSlot {
    void *host = nullptr;
    std::byte *device = nullptr;
    size_t bytes = 0;
    cudaEvent_t copied = nullptr, consumed = nullptr;
    bool used = false;
  };
  /// Uploads larger than this go straight from the host's bytes (params at
  /// the start, a checkpoint): staging them would hold that much twice.
  static constexpr size_t kStagedUploadMax = size_t(64) << 20;
  void raiseReportedError();
  /// Waits for a staging event, counting a wait only if it is not done yet.
  void waitFor(cudaEvent_t event);
  void track(int64_t bytes);
  std::string name_;
  int capability_ = 0;
  size_t sharedPerBlock_ = 0;
  cudaStream_t stream_ = nullptr;
  cublasLtHandle_t blasLt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  int32_t *errorWord_ = nullptr;
  std::byte *scratch_ = nullptr;
  size_t scratchBytes_ = 0;
  /// Outgrown scratch, kept: a captured step may still point into it.
  std::vector<std::byte *> oldScratch_;
  cudaStream_t copyStream_ = nullptr;
  std::array<UploadSlot, 4> slots_;
  size_t nextSlot_ = 0;
  int64_t liveBytes_ = 0, peakBytes_ = 0, hostSyncs_ = 0, stagingWaits_ = 0;
  std::vector<std::string> stepNames_;
};

} // namespace ampc::rt::cuda

#endif
