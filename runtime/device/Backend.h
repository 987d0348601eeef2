// A backend runs plans of its target on its device. prepare() takes a plan
// whose buffers already have device addresses, prepares every step once
// (its kernel, its decoded attributes, its bound buffers) and records the
// whole step sequence into a Program: on the CPU a loop over prepared steps;
// on CUDA a stream of launches, and later a CUDA graph.
#ifndef AMPC_RUNTIME_DEVICE_BACKEND_H
#define AMPC_RUNTIME_DEVICE_BACKEND_H

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/core/Plan.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/device/Communicator.h"
#include "runtime/device/Device.h"

namespace ampc::rt {

struct ExecOptions {
  /// Dropout drops and batch norm uses (and updates) batch statistics.
  bool training = false;
  /// The run's seed: params' initial values and dropout's streams.
  uint64_t seed = 0;
  /// Times every step (Program::profile).
  bool profile = false;
  /// The backend to run on: "cpu" or "cuda".
  std::string device = "cpu";
  /// A device backend may capture the step once and replay it (CUDA graphs).
  bool graphs = true;
  /// The ranks of a data-parallel run that `all_reduce` steps sum over; null
  /// for one rank. Not owned.
  Communicator *communicator = nullptr;
  /// A device backend may time its libraries' candidate algorithms at a
  /// step's first run and keep the fastest (docs/cuda.md, "GEMM tuning");
  /// off (the default), it runs each library's first choice: the same
  /// algorithms, so the same bits, in every process.
  bool tuneGemms = false;
  /// A device backend may check the gradients for non-finite values on a
  /// second stream as the backward writes them (docs/cuda.md, "Overlapped
  /// checks"); off, the check runs in its place in the step order. The same
  /// result either way.
  bool overlapChecks = true;
};

/// Which steps of a run execute: with gradient accumulation, steps of the
/// `apply` phase (the optimizer) run only on the window's last micro-batch
/// and steps of the `first` phase (state backups) only on its first.
struct RunFlags {
  bool apply = true, first = true;
};

/// Whether a step of `phase` runs in a run with `flags`.
inline bool runsIn(Phase phase, const RunFlags &flags) {
  return (phase != Phase::Apply || flags.apply) && (phase != Phase::First || flags.first);
}

/// Where a plan's two regions start in device memory.
struct PlanMemory {
  std::byte *arena = nullptr, *persistent = nullptr;
};

/// A buffer of the plan as a tensor at its device address.
inline TensorRef bufferRef(const Plan &plan, const PlanMemory &memory, int id) {
  const Buffer &b = plan.buffers.at(id);
  std::byte *base = b.isPersistent() ? memory.persistent : memory.arena;
  return TensorRef{base + b.offset, b.dtype, b.shape};
}

/// Times of a profiled program, summed over runs: per kernel name, per
/// launch (keyed by its first step; a launch runs the steps [first, end),
/// more than one where updates share a multi-tensor launch), and the whole
/// runs (the difference is dispatch: time outside kernels).
struct Profile {
  struct Launch {
    size_t end = 0;
    double ms = 0;
  };
  std::map<std::string, double> kernelMs;
  std::map<size_t, Launch> launchMs;
  double runMs = 0;
  int64_t runs = 0;
};

/// A plan recorded for one device: each run() executes the whole step.
class Program {
public:
  virtual ~Program() = default;
  /// Queues one run of the steps; throws RuntimeError naming the step on
  /// failure (the CPU runs synchronously, a GPU may report at the next sync).
  virtual void run(const RunFlags &flags) = 0;
  /// Queues step `index` alone, whatever its phase, outside any captured
  /// graph: for comparing backends kernel by kernel (runtime/driver/
  /// BackendCheck.h). `index` is checked by the caller.
  virtual void runStep(size_t index) = 0;
  virtual const Profile &profile() const = 0;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  /// A communicator over the same ranks as `host` that works on this
  /// device's memory and queue, bootstrapped through `host` (NCCL on CUDA);
  /// null when `host` itself reaches this device's memory (the CPU).
  virtual std::unique_ptr<Communicator> deviceCommunicator(Communicator &host) {
    (void)host;
    return nullptr;
  }
  /// The target it lowers plans for.
  virtual const Target &target() const = 0;
  /// Whether it runs plans lowered for `plan` (by default: its own target).
  virtual bool accepts(const Target &plan) const { return plan == target(); }
  virtual Device &device() = 0;
  /// The plan kernels it implements, sorted.
  virtual std::vector<std::string> kernelNames() const = 0;
  /// Prepares every step of `plan` (already checked: its target is this
  /// backend's and each step's kernel and arity are known) and records them.
  virtual std::unique_ptr<Program> prepare(const Plan &plan, const PlanMemory &memory,
                                           const ExecOptions &options) = 0;
};

} // namespace ampc::rt

#endif
