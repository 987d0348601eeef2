// Runs a plan on a backend: allocates its arena and persistent region on the
// backend's device, loads consts, initialises params, and runs the prepared
// program. Everything outside the runtime reaches buffers through read,
// write and readScalar by buffer id: never a pointer into device memory.
#ifndef AMPC_RUNTIME_DEVICE_EXECUTOR_H
#define AMPC_RUNTIME_DEVICE_EXECUTOR_H

#include <memory>
#include <string>
#include <vector>

#include "runtime/device/Backend.h"

namespace ampc::rt {

class Executor {
public:
  /// Checks the plan against the backend (target, kernels, arity), allocates
  /// memory, loads consts and initialises params from their init specs with
  /// `options.seed`. Throws PlanError or RuntimeError.
  explicit Executor(Plan plan, ExecOptions options = {});
  ~Executor();

  const Plan &plan() const { return plan_; }
  Backend &backend() { return *backend_; }
  /// The buffer called `name`; throws RuntimeError if there is none.
  int id(const std::string &name) const;

  /// Host <-> buffer, in the buffer's own dtype: `bytes` must be its size.
  void write(int id, const void *src, size_t bytes);
  void read(int id, void *dst, size_t bytes) const;
  std::vector<std::byte> readBytes(int id) const;
  /// Host f32 values <-> buffer, converted (rounded to nearest even) to and
  /// from its dtype; `values` fills the buffer.
  void writeF32(int id, const std::vector<float> &values);
  std::vector<float> readF32(int id) const;
  /// A one-element buffer's value as a double (of any dtype).
  double readScalar(int id) const;
  void writeScalar(int id, double value);

  /// (Re)initialises every param from its init spec.
  void initParams(uint64_t seed);
  /// Runs the steps once (see RunFlags). Throws RuntimeError naming the step.
  void run(bool apply = true, bool first = true);
  /// Runs step `index` of the plan alone, whatever its phase (the run
  /// count does not change): for comparing backends step by step.
  void runStep(size_t index);
  /// Keeps a device-side copy of the persistent region (params, optimizer
  /// state, loss scale, counters), replacing the last one: the state before
  /// a step, for the numerics check.
  void snapshotPersistent();
  /// The last snapshot's bytes (empty if none), and bytes written over the
  /// persistent region (of an executor of the same plan or its withoutReuse).
  std::vector<std::byte> snapshotBytes() const;
  void writePersistent(const std::vector<std::byte> &bytes);
  /// Runs so far; with the plan's run counter it keys dropout's streams.
  uint64_t iterations() const { return iteration_; }
  /// Restores the run count on resume (the counter buffer too).
  void setIterations(uint64_t n);
  /// Blocks until the queued runs are done.
  void synchronize();
  /// With ExecOptions::profile: times per kernel and of whole runs.
  const Profile &profile() const;

private:
  const Buffer &buffer(int id, size_t bytes) const;
  Plan plan_;
  ExecOptions options_;
  std::unique_ptr<Backend> backend_;
  /// The backend's own communicator for a data-parallel run (NCCL), if any:
  /// the steps' all_reduce use it instead of the host one.
  std::unique_ptr<Communicator> deviceCommunicator_;
  DeviceMemory arena_, persistent_, snapshot_;
  std::unique_ptr<Program> program_;
  /// Per buffer, the weight copies that follow it (Buffer::copyOf).
  std::vector<std::vector<int>> copies_;
  uint64_t iteration_ = 0;
};

} // namespace ampc::rt

#endif
