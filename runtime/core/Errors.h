// The runtime's errors: both carry a message that names the buffer, step or
// file at fault; tools print them as `<tool>: error: <file>: <what>`.
#ifndef AMPC_RUNTIME_CORE_ERRORS_H
#define AMPC_RUNTIME_CORE_ERRORS_H

#include <stdexcept>

namespace ampc::rt {

/// A bad plan file or a plan that does not hold together.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An error while running a plan (such as an index out of range) or reading
/// its data, checkpoints or devices.
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A backend that cannot run here: this machine lacks its hardware (no GPU,
/// no driver), or this build left it out (-DAMPC_CUDA=OFF, no nvcc). Tests
/// and checks skip rather than fail.
struct DeviceUnavailable : RuntimeError {
  using RuntimeError::RuntimeError;
};

} // namespace ampc::rt

#endif
