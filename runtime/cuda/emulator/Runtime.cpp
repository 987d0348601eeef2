// The CUDA runtime calls of our CUDA backend, on the host (docs/cuda.md,
// "The CUDA emulation"): device memory is host memory, every stream is the
// host's one order of work (an event is done once recorded and holds the
// host's time then), and a graph is the list of launches and copies a
// stream's capture recorded, replayed on each graph launch. The device is
// an sm_90 with 227 KiB of shared memory a block. The cuBLASLt and cuDNN
// handles stand for nothing: CublasLt.cpp and Cudnn.cpp need no state.
#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <new>
#include <vector>

#include "runtime/cuda/emulator/Emulator.h"

namespace {

using Work = std::vector<std::function<void()>>;

int handles = 0; // streams, events and library handles: distinct non-null pointers

template <typename Handle> Handle newHandle() {
  return reinterpret_cast<Handle>(static_cast<intptr_t>(++handles));
}

/// When each event was last recorded (the host's clock, ns): the work
/// before it has run, all of it on the host.
std::map<cudaEvent_t, uint64_t> &eventTimes() {
  static std::map<cudaEvent_t, uint64_t> times;
  return times;
}

cudaError_t copy(void *dst, const void *src, size_t bytes) {
  if (bytes)
    ampc::emu::submit([=] { std::memmove(dst, src, bytes); });
  return cudaSuccess;
}

} // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int *count) {
  *count = 1;
  return cudaSuccess;
}
cudaError_t cudaSetDevice(int) { return cudaSuccess; }
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *prop, int) {
  std::memset(prop, 0, sizeof *prop);
  std::strcpy(prop->name, "CUDA emulation (host)");
  prop->major = 9;
  prop->minor = 0;
  prop->sharedMemPerBlock = 48 * 1024;
  prop->sharedMemPerBlockOptin = ampc::emu::kSharedCapacity;
  prop->multiProcessorCount = 1;
  prop->warpSize = 32;
  prop->maxThreadsPerBlock = 1024;
  prop->totalGlobalMem = size_t(1) << 34;
  return cudaSuccess;
}
cudaError_t cudaGetLastError() { return cudaSuccess; }
cudaError_t cudaPeekAtLastError() { return cudaSuccess; }
const char *cudaGetErrorString(cudaError_t error) {
  return error == cudaSuccess ? "no error" : "an error of the CUDA emulation";
}
cudaError_t cudaFuncSetAttribute(const void *, cudaFuncAttribute, int value) {
  return value <= (int)ampc::emu::kSharedCapacity ? cudaSuccess : cudaErrorInvalidValue;
}

cudaError_t cudaMalloc(void **p, size_t bytes) {
  *p = std::aligned_alloc(256, (std::max<size_t>(bytes, 1) + 255) / 256 * 256);
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t cudaFree(void *p) {
  std::free(p);
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void **p, size_t bytes, unsigned int) { return cudaMalloc(p, bytes); }
cudaError_t cudaFreeHost(void *p) { return cudaFree(p); }

cudaError_t cudaMemcpy(void *dst, const void *src, size_t bytes, cudaMemcpyKind) {
  std::memmove(dst, src, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t bytes, cudaMemcpyKind,
                            cudaStream_t) {
  return copy(dst, src, bytes);
}
cudaError_t cudaMemcpy2DAsync(void *dst, size_t dpitch, const void *src, size_t spitch,
                              size_t width, size_t height, cudaMemcpyKind, cudaStream_t) {
  ampc::emu::submit([=] {
    for (size_t r = 0; r < height; ++r)
      std::memmove(static_cast<char *>(dst) + r * dpitch,
                   static_cast<const char *>(src) + r * spitch, width);
  });
  return cudaSuccess;
}
cudaError_t cudaMemset(void *p, int value, size_t bytes) {
  std::memset(p, value, bytes);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int value, size_t bytes, cudaStream_t) {
  if (bytes)
    ampc::emu::submit([=] { std::memset(p, value, bytes); });
  return cudaSuccess;
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t *stream, unsigned int) {
  *stream = newHandle<cudaStream_t>();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned int) { return cudaSuccess; }

cudaError_t cudaEventCreate(cudaEvent_t *event) {
  *event = newHandle<cudaEvent_t>();
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t) {
  ampc::emu::submit([event] { eventTimes()[event] = ampc::emu::globalTimer(); });
  return cudaSuccess;
}
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end) {
  *ms = float(double(eventTimes()[end] - eventTimes()[start]) * 1e-6);
  return cudaSuccess;
}

cudaError_t cudaStreamIsCapturing(cudaStream_t, cudaStreamCaptureStatus *status) {
  *status = ampc::emu::capturing() ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusNone;
  return cudaSuccess;
}
cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) {
  ampc::emu::beginCapture();
  return cudaSuccess;
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t *graph) {
  *graph = reinterpret_cast<cudaGraph_t>(new Work(ampc::emu::endCapture()));
  return cudaSuccess;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long) {
  *exec = reinterpret_cast<cudaGraphExec_t>(new Work(*reinterpret_cast<Work *>(graph)));
  return cudaSuccess;
}
cudaError_t cudaGraphDestroy(cudaGraph_t graph) {
  delete reinterpret_cast<Work *>(graph);
  return cudaSuccess;
}
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec) {
  delete reinterpret_cast<Work *>(exec);
  return cudaSuccess;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t) {
  for (const std::function<void()> &work : *reinterpret_cast<Work *>(exec))
    ampc::emu::submit(work);
  return cudaSuccess;
}

cublasStatus_t cublasLtCreate(cublasLtHandle_t *handle) {
  *handle = newHandle<cublasLtHandle_t>();
  return CUBLAS_STATUS_SUCCESS;
}
cublasStatus_t cublasLtDestroy(cublasLtHandle_t) { return CUBLAS_STATUS_SUCCESS; }
cudnnStatus_t cudnnCreate(cudnnHandle_t *handle) {
  *handle = newHandle<cudnnHandle_t>();
  return CUDNN_STATUS_SUCCESS;
}
cudnnStatus_t cudnnDestroy(cudnnHandle_t) { return CUDNN_STATUS_SUCCESS; }
cudnnStatus_t cudnnSetStream(cudnnHandle_t, cudaStream_t) { return CUDNN_STATUS_SUCCESS; }

} // extern "C"
