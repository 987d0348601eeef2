// The CUDA backend: its program queues every prepared step on the device's
// stream, runs of optimizer updates as one multi-tensor launch each. After a
// first run (which sizes every workspace), the step is captured into a CUDA
// graph, one per combination of accumulation phases, and each later run is
// one graph launch: no host work per kernel and no host synchronisation
// inside a step. The finite check runs in parts on a second stream beside
// the backward (OverlappedCheck.h). runStep runs one plan step alone,
// ungrouped.
#include <algorithm>
#include <array>
#include <memory>

#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/OverlappedCheck.h"
#include "runtime/device/Backend.h"

namespace ampc::rt::cuda {
namespace {

using PreparedStep = rt::PreparedStep<LaunchContext>;

/// What one run queues: a step, or a group of steps [begin, end).
struct Launch {
  size_t begin, end;
  std::vector<LaunchContext *> members; // a group's, else empty
  DeviceMemory table;                   // a group's tensor list
};

/// Consecutive updates, or copies, that may share a launch form one group
/// each.
std::vector<Launch> scheduleOf(std::vector<PreparedStep> &steps) {
  std::vector<Launch> launches;
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!launches.empty()) {
      Launch &last = launches.back();
      const PreparedStep &first = steps[last.begin];
      if (last.end == i && first.phase == steps[i].phase &&
          (joinsUpdateGroup(first.context, steps[i].context) ||
           joinsCopyGroup(first.context, steps[i].context))) {
        last.end = i + 1;
        continue;
      }
    }
    launches.push_back({i, i + 1, {}, {}});
  }
  for (Launch &l : launches)
    if (l.end - l.begin > 1)
      for (size_t i = l.begin; i < l.end; ++i)
        l.members.push_back(&steps[i].context);
  return launches;
}

/// Gradients a part of an overlapped check holds at least (the last part
/// aside): enough to fill the device, few enough forks; a quarter of them
/// where they are fewer than 32 MiB, so that small models split too.
constexpr int64_t kCheckPartBytes = 8 << 20;

/// The plan's one plain `check_finite` step, in parts, or null where it has
/// none or splitting it would not pay (runtime/core/EarlyChecks.h).
std::unique_ptr<OverlappedCheck> overlappedCheck(const Plan &plan,
                                                 std::vector<PreparedStep> &steps) {
  std::unique_ptr<OverlappedCheck> found;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (plan.steps[i].kernel != Kernel::CheckFinite)
      continue;
    int64_t bytes = 0;
    for (int id : plan.steps[i].inputs)
      bytes += plan.buffers[id].bytes;
    std::vector<EarlyCheck> parts = earlyChecks(plan, i, std::min(kCheckPartBytes, bytes / 4));
    if (found || parts.empty())
      return nullptr;
    found = std::make_unique<OverlappedCheck>(steps[i].context, i, std::move(parts));
  }
  return found;
}

class CudaProgram : public Program {
public:
  CudaProgram(std::vector<PreparedStep> steps, CudaDevice &device, bool profiling, bool graphs,
              std::unique_ptr<OverlappedCheck> check)
      : steps_(std::move(steps)), launches_(scheduleOf(steps_)), device_(device),
        profiling_(profiling), graphs_(graphs && !profiling), check_(std::move(check)) {}

  ~CudaProgram() override {
    for (auto &g : execs_)
      if (g)
        cudaGraphExecDestroy(g);
  }

  void run(const RunFlags &flags) override {
    int key = (flags.apply ? 1 : 0) | (flags.first ? 2 : 0);
    if (graphs_ && execs_[key]) {
      AMPC_CUDA_CHECK(cudaGraphLaunch(execs_[key], device_.stream()));
      return;
    }
    if (graphs_ && warmed_[key]) {
      capture(flags, key);
      AMPC_CUDA_CHECK(cudaGraphLaunch(execs_[key], device_.stream()));
      return;
    }
    if (profiling_ && warmed_[key])
      queueTimed(flags);
    else
      queue(flags);
    warmed_[key] = true;
  }

  void runStep(size_t index) override { steps_[index].run(); }

  const Profile &profile() const override { return profile_; }

private:
  void launch(Launch &l) {
    if (l.members.empty())
      steps_[l.begin].run();
    else if (isGroupedUpdate(steps_[l.begin].context.step.kernel))
      runUpdateGroup(l.members, l.table);
    else
      runCopyGroup(l.members, l.table);
  }

  /// Every launch of the run in order; with an overlapped check, its parts
  /// fork as their gradients are written and join in its place.
  void queue(const RunFlags &flags) {
    OverlappedCheck *check = check_ && steps_[check_->index()].runsIn(flags) ? check_.get() : nullptr;
    for (Launch &l : launches_) {
      if (check && l.begin == check->index())
        check->join();
      else if (steps_[l.begin].runsIn(flags))
        launch(l);
      if (check)
        check->after(l.end - 1);
    }
  }

  /// A profiled run: the device held while the host queues every launch
  /// between two events, then the times read. A variant's first run (its
  /// workspaces, the libraries' choices and module loads) is not timed.
  void queueTimed(const RunFlags &flags) {
    std::vector<std::pair<const Launch *, std::unique_ptr<Timer>>> timers;
    timers.reserve(launches_.size());
    device_.hold(std::min(5.0 + 0.05 * (double)launches_.size(), 500.0));
    std::unique_ptr<Timer> whole = device_.timer();
    whole->start();
    for (Launch &l : launches_) {
      if (!steps_[l.begin].runsIn(flags))
        continue;
      timers.emplace_back(&l, device_.timer());
      timers.back().second->start();
      launch(l);
      timers.back().second->stop();
    }
    whole->stop();
    profile_.runMs += whole->elapsedMs();
    for (auto &[l, timer] : timers) {
      double ms = timer->elapsedMs();
      profile_.kernelMs[kernelName(steps_[l->begin].context.step.kernel)] += ms;
      Profile::Launch &timed = profile_.launchMs[l->begin];
      timed.end = l->end;
      timed.ms += ms;
    }
    ++profile_.runs;
  }

  void capture(const RunFlags &flags, int key) {
    cudaGraph_t graph;
    AMPC_CUDA_CHECK(cudaStreamBeginCapture(device_.stream(), cudaStreamCaptureModeThreadLocal));
    try {
      queue(flags);
    } catch (...) {
      cudaStreamEndCapture(device_.stream(), &graph);
      throw;
    }
    AMPC_CUDA_CHECK(cudaStreamEndCapture(device_.stream(), &graph));
    AMPC_CUDA_CHECK(cudaGraphInstantiate(&execs_[key], graph, 0));
    cudaGraphDestroy(graph);
  }

  std::vector<PreparedStep> steps_;
  std::vector<Launch> launches_;
  CudaDevice &device_;
  bool profiling_, graphs_;
  std::array<cudaGraphExec_t, 4> execs_{};
  std::array<bool, 4> warmed_{};
  Profile profile_;
  std::unique_ptr<OverlappedCheck> check_; // the step's finite check, in parts
};

class CudaBackend : public Backend {
public:
  std::string name() const override { return "cuda"; }
  const Target &target() const override { return cudaTarget(); }
  Device &device() override { return device_; }
  std::vector<std::string> kernelNames() const override { return kernels().names(); }
  std::unique_ptr<Communicator> deviceCommunicator(Communicator &host) override {
    return cuda::ncclCommunicator(host, device_.stream());
  }

  std::unique_ptr<Program> prepare(const Plan &plan, const PlanMemory &memory,
                                   const ExecOptions &options) override {
    auto steps = prepareSteps(plan, memory, options, kernels(), [&](KernelContext base) {
      return LaunchContext{std::move(base), device_, {}, {}, options.tuneGemms};
    });
    std::vector<std::string> names;
    for (const Step &s : plan.steps)
      names.push_back(s.name);
    device_.setStepNames(std::move(names));
    std::unique_ptr<OverlappedCheck> check;
    if (options.overlapChecks && !options.profile)
      check = overlappedCheck(plan, steps);
    return std::make_unique<CudaProgram>(std::move(steps), device_, options.profile,
                                         options.graphs, std::move(check));
  }

private:
  CudaDevice device_;
};

} // namespace
} // namespace ampc::rt::cuda

/// The plugin's entry point (runtime/device/Registry.h): a new backend, or a
/// RuntimeError saying why there is none (no GPU, no driver).
extern "C" ampc::rt::Backend *ampcCreateCudaBackend() {
  return new ampc::rt::cuda::CudaBackend();
}

/// The plugin's kernel names, comma-separated, without a device: for the
/// test that every kernel of every backend has a traits row.
extern "C" const char *ampcCudaKernelNames() {
  static const std::string names = [] {
    std::string all;
    for (const std::string &n : ampc::rt::cuda::kernels().names())
      all += (all.empty() ? "" : ",") + n;
    return all;
  }();
  return names.c_str();
}
