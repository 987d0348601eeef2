#include "runtime/cuda/CudaDevice.h"

#include <cstring>

namespace ampc::rt::cuda {
namespace {

class EventTimer : public Timer {
public:
  EventTimer(cudaStream_t stream, CudaDevice &device) : stream_(stream), device_(device) {
    AMPC_CUDA_CHECK(cudaEventCreate(&start_));
    AMPC_CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~EventTimer() override {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  void start() override { AMPC_CUDA_CHECK(cudaEventRecord(start_, stream_)); }
  void stop() override { AMPC_CUDA_CHECK(cudaEventRecord(stop_, stream_)); }
  double elapsedMs() override {
    device_.countSync();
    AMPC_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    AMPC_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

private:
  cudaStream_t stream_;
  CudaDevice &device_;
  cudaEvent_t start_, stop_;
};

__global__ void spin(uint64_t ns) {
  uint64_t start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while (now - start < ns);
}

} // namespace

void CudaDevice::hold(double ms) {
  spin<<<1, 1, 0, stream_>>>(uint64_t(ms * 1e6));
  AMPC_CUDA_CHECK(cudaGetLastError());
}

CudaDevice::CudaDevice() {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw DeviceUnavailable(std::string("--device cuda: no CUDA device (") +
                            (status != cudaSuccess ? cudaGetErrorString(status) : "none found") +
                            "); use --device cpu");
  AMPC_CUDA_CHECK(cudaSetDevice(0));
  cudaDeviceProp props;
  AMPC_CUDA_CHECK(cudaGetDeviceProperties(&props, 0));
  name_ = props.name;
  capability_ = props.major * 10 + props.minor;
  sharedPerBlock_ = props.sharedMemPerBlockOptin;
  AMPC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  AMPC_CUDA_CHECK(cudaStreamCreateWithFlags(&copyStream_, cudaStreamNonBlocking));
  for (UploadSlot &s : slots_) {
    AMPC_CUDA_CHECK(cudaEventCreateWithFlags(&s.copied, cudaEventDisableTiming));
    AMPC_CUDA_CHECK(cudaEventCreateWithFlags(&s.consumed, cudaEventDisableTiming));
  }
  if (cublasLtCreate(&blasLt_) != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError("cuda: cannot create a cuBLASLt handle");
  AMPC_CUDA_CHECK(cudaMalloc(&errorWord_, sizeof(int32_t)));
  AMPC_CUDA_CHECK(cudaMemset(errorWord_, 0, sizeof(int32_t)));
}

CudaDevice::~CudaDevice() {
  if (stream_)
    cudaStreamSynchronize(stream_);
  if (dnn_)
    cudnnDestroy(dnn_);
  if (blasLt_)
    cublasLtDestroy(blasLt_);
  cudaFree(errorWord_);
  cudaFree(scratch_);
  for (std::byte *p : oldScratch_)
    cudaFree(p);
  if (copyStream_)
    cudaStreamSynchronize(copyStream_);
  for (UploadSlot &s : slots_) {
    cudaFreeHost(s.host);
    cudaFree(s.device);
    if (s.copied)
      cudaEventDestroy(s.copied);
    if (s.consumed)
      cudaEventDestroy(s.consumed);
  }
  if (copyStream_)
    cudaStreamDestroy(copyStream_);
  if (stream_)
    cudaStreamDestroy(stream_);
}

cudnnHandle_t CudaDevice::dnn() {
  if (!dnn_) {
    if (cudnnCreate(&dnn_) != CUDNN_STATUS_SUCCESS)
      throw RuntimeError("cuda: cannot create a cuDNN handle");
    cudnnSetStream(dnn_, stream_);
  }
  return dnn_;
}

DeviceMemory CudaDevice::allocate(int64_t bytes, int64_t alignment) {
  // cudaMalloc aligns to 256 bytes, enough for every target alignment here.
  size_t size = std::max<int64_t>(bytes, 1);
  void *p = nullptr;
  if (cudaMalloc(&p, size) != cudaSuccess)
    throw RuntimeError("cuda: cannot allocate " + std::to_string(bytes) + " bytes on " + name_);
  AMPC_CUDA_CHECK(cudaMemsetAsync(p, 0, size, stream_));
  track(size);
  return DeviceMemory(static_cast<std::byte *>(p), [this, size](std::byte *q) {
    cudaFree(q);
    track(-(int64_t)size);
  });
}

void CudaDevice::waitFor(cudaEvent_t event) {
  cudaError_t status = cudaEventQuery(event);
  if (status == cudaSuccess)
    return; // done already: no wait
  if (status != cudaErrorNotReady)
    AMPC_CUDA_CHECK(status);
  ++stagingWaits_;
  AMPC_CUDA_CHECK(cudaEventSynchronize(event));
}

void CudaDevice::track(int64_t bytes) {
  liveBytes_ += bytes;
  peakBytes_ = std::max(peakBytes_, liveBytes_);
}

/// A ring of staging slots: the copy of a batch into device staging runs on
/// the copy stream while the previous step's kernels run, and only the last
/// device-to-device copy into the plan's input waits for that step (on the
/// compute stream, so no kernel still reading the input sees it change).
/// The host waits only when it is a whole ring of uploads ahead.
void CudaDevice::upload(std::byte *device, const void *host, size_t bytes) {
  if (bytes == 0)
    return;
  if (bytes > kStagedUploadMax) {
    // From pageable memory: CUDA stages it and returns once the host's
    // bytes are read, after the stream's earlier work.
    countSync();
    AMPC_CUDA_CHECK(cudaMemcpyAsync(device, host, bytes, cudaMemcpyHostToDevice, stream_));
    return;
  }
  UploadSlot &slot = slots_[nextSlot_];
  nextSlot_ = (nextSlot_ + 1) % slots_.size();
  if (slot.used) // its pinned bytes are free once its last copy is done
    waitFor(slot.copied);
  if (bytes > slot.bytes) {
    if (slot.used) // its device staging may still feed a queued copy
      waitFor(slot.consumed);
    cudaFreeHost(slot.host);
    cudaFree(slot.device);
    track(-2 * (int64_t)slot.bytes);
    slot.host = nullptr;
    slot.device = nullptr;
    slot.bytes = 0;
    AMPC_CUDA_CHECK(cudaHostAlloc(&slot.host, bytes, cudaHostAllocDefault));
    AMPC_CUDA_CHECK(cudaMalloc(&slot.device, bytes));
    slot.bytes = bytes;
    track(2 * (int64_t)bytes);
    slot.used = false;
  }
  std::memcpy(slot.host, host, bytes);
  if (slot.used) // the device staging is free once its last copy out has run
    AMPC_CUDA_CHECK(cudaStreamWaitEvent(copyStream_, slot.consumed, 0));
  AMPC_CUDA_CHECK(
      cudaMemcpyAsync(slot.device, slot.host, bytes, cudaMemcpyHostToDevice, copyStream_));
  AMPC_CUDA_CHECK(cudaEventRecord(slot.copied, copyStream_));
  AMPC_CUDA_CHECK(cudaStreamWaitEvent(stream_, slot.copied, 0));
  AMPC_CUDA_CHECK(cudaMemcpyAsync(device, slot.device, bytes, cudaMemcpyDeviceToDevice, stream_));
  AMPC_CUDA_CHECK(cudaEventRecord(slot.consumed, stream_));
  slot.used = true;
}

void CudaDevice::download(void *host, const std::byte *device, size_t bytes) {
  AMPC_CUDA_CHECK(cudaMemcpyAsync(host, device, bytes, cudaMemcpyDeviceToHost, stream_));
  synchronize();
}

void CudaDevice::copy(std::byte *dst, const std::byte *src, size_t bytes) {
  if (bytes)
    AMPC_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaDevice::synchronize() {
  countSync();
  AMPC_CUDA_CHECK(cudaStreamSynchronize(stream_));
  raiseReportedError();
}

void CudaDevice::raiseReportedError() {
  int32_t word = 0;
  AMPC_CUDA_CHECK(cudaMemcpy(&word, errorWord_, sizeof word, cudaMemcpyDeviceToHost));
  if (!word)
    return;
  AMPC_CUDA_CHECK(cudaMemset(errorWord_, 0, sizeof word));
  size_t step = size_t(word) >> 8;
  std::string where = step < stepNames_.size() ? "step '" + stepNames_[step] + "': " : "";
  switch (word & 0xFF) {
  case kIndexOutOfRange: throw RuntimeError(where + "an id is out of range of its table");
  case kLabelOutOfRange:
    throw RuntimeError(where + "a label is out of range of the classes (rows of a label to skip "
                               "need --ignore-index)");
  case kDivisionByZero: throw RuntimeError(where + "integer division by zero");
  case kDivisionOverflow: throw RuntimeError(where + "integer division overflows");
  default: throw RuntimeError(where + "a kernel reported an error");
  }
}

std::unique_ptr<Timer> CudaDevice::timer() {
  return std::make_unique<EventTimer>(stream_, *this);
}

std::byte *CudaDevice::scratch(size_t bytes) {
  if (bytes > scratchBytes_) {
    if (scratch_)
      oldScratch_.push_back(scratch_);
    scratch_ = nullptr;
    AMPC_CUDA_CHECK(cudaMalloc(&scratch_, bytes));
    scratchBytes_ = bytes;
    track((int64_t)bytes);
  }
  return scratch_;
}

} // namespace ampc::rt::cuda
