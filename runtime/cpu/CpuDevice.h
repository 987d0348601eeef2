// The CPU device: host memory, copies that are memcpy, a steady clock.
#ifndef AMPC_RUNTIME_CPU_CPUDEVICE_H
#define AMPC_RUNTIME_CPU_CPUDEVICE_H

#include <vector>

#include "runtime/device/Device.h"

namespace ampc::rt {

class CpuDevice : public Device {
public:
  CpuDevice();
  std::string name() const override { return "cpu"; }
  DeviceMemory allocate(int64_t bytes, int64_t alignment) override;
  void upload(std::byte *device, const void *host, size_t bytes) override;
  void download(void *host, const std::byte *device, size_t bytes) override;
  void copy(std::byte *dst, const std::byte *src, size_t bytes) override;
  void synchronize() override {}
  std::unique_ptr<Timer> timer() override;
  std::byte *scratch(size_t bytes) override;
  DeviceStats stats() const override;

private:
  std::vector<std::byte> scratch_;
  int64_t liveBytes_ = 0, peakBytes_ = 0;
};

} // namespace ampc::rt

#endif
