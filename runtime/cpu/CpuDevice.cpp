#include "runtime/cpu/CpuDevice.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

#include "runtime/core/Errors.h"

namespace ampc::rt {
namespace {

class CpuTimer : public Timer {
public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsedMs() override {
    return std::chrono::duration<double, std::milli>(t1_ - t0_).count();
  }

private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

} // namespace

/// Kernels allocate scratch tensors on every call. glibc would serve large
/// ones with fresh mmaps and unmap them on free, so every call would fault
/// its pages in again (several ms per training step in a VM); keeping freed
/// memory in the heap makes the next allocation reuse resident pages.
CpuDevice::CpuDevice() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
}

DeviceMemory CpuDevice::allocate(int64_t bytes, int64_t alignment) {
  size_t size = std::max<int64_t>(alignment, (bytes + alignment - 1) / alignment * alignment);
  void *p = std::aligned_alloc(alignment, size);
  if (!p)
    throw RuntimeError("cannot allocate " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, size);
  liveBytes_ += size;
  peakBytes_ = std::max(peakBytes_, liveBytes_ + (int64_t)scratch_.size());
  return DeviceMemory(static_cast<std::byte *>(p), [this, size](std::byte *q) {
    std::free(q);
    liveBytes_ -= size;
  });
}

void CpuDevice::upload(std::byte *device, const void *host, size_t bytes) {
  std::memcpy(device, host, bytes);
}

void CpuDevice::download(void *host, const std::byte *device, size_t bytes) {
  std::memcpy(host, device, bytes);
}

void CpuDevice::copy(std::byte *dst, const std::byte *src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}

std::unique_ptr<Timer> CpuDevice::timer() { return std::make_unique<CpuTimer>(); }

std::byte *CpuDevice::scratch(size_t bytes) {
  if (scratch_.size() < bytes) {
    scratch_.resize(bytes);
    peakBytes_ = std::max(peakBytes_, liveBytes_ + (int64_t)scratch_.size());
  }
  return scratch_.data();
}

DeviceStats CpuDevice::stats() const { return {peakBytes_, 0, 0}; }

} // namespace ampc::rt
