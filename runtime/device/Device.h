// A device owns memory: it allocates the plan's arena and persistent region,
// moves bytes between the host and its memory, synchronises, and gives timers
// and scratch space. The CPU device is host memory; the CUDA device is
// cudaMalloc'd memory and a stream.
#ifndef AMPC_RUNTIME_DEVICE_DEVICE_H
#define AMPC_RUNTIME_DEVICE_DEVICE_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace ampc::rt {

/// Device memory, released by the device that gave it.
using DeviceMemory = std::unique_ptr<std::byte, std::function<void(std::byte *)>>;

/// What a device counts, for metrics and for checking that a training step
/// never makes the host wait.
struct DeviceStats {
  /// The most bytes of device memory held at once (plan regions, scratch,
  /// staging).
  int64_t peakBytes = 0;
  /// Times the host waited until the device had done all it was given
  /// (stream synchronisations, copies back, reading a timer): each drains
  /// the device's queue. Always 0 where the device is the host.
  int64_t hostSyncs = 0;
  /// Times an upload waited for a staging buffer to come free: back
  /// pressure while the device still has queued work, not a drain.
  int64_t stagingWaits = 0;
};

/// Times work on the device between start() and stop().
class Timer {
public:
  virtual ~Timer() = default;
  virtual void start() = 0;
  virtual void stop() = 0;
  /// Milliseconds between start and stop; may wait for the device.
  virtual double elapsedMs() = 0;
};

class Device {
public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  /// `bytes` of zeroed memory whose address is a multiple of `alignment`.
  /// Throws RuntimeError when the device has not that much.
  virtual DeviceMemory allocate(int64_t bytes, int64_t alignment) = 0;
  /// Host -> device: ordered before all work queued after it; the host's
  /// bytes may be reused when it returns.
  virtual void upload(std::byte *device, const void *host, size_t bytes) = 0;
  /// Device -> host, after all work queued before it; complete on return.
  virtual void download(void *host, const std::byte *device, size_t bytes) = 0;
  /// Device -> device, ordered with the device's other work.
  virtual void copy(std::byte *dst, const std::byte *src, size_t bytes) = 0;
  /// Waits until all work queued on the device is done.
  virtual void synchronize() = 0;
  virtual std::unique_ptr<Timer> timer() = 0;
  /// At least `bytes` of device memory for a kernel's temporaries, valid
  /// until the next call (one kernel at a time uses it).
  virtual std::byte *scratch(size_t bytes) = 0;
  virtual DeviceStats stats() const = 0;
};

} // namespace ampc::rt

#endif
