// The CPU backend: its program is a loop over prepared steps, each a kernel
// function with its context (decoded attributes, bound tensors) built once.
#include <chrono>

#include "runtime/cpu/CpuDevice.h"
#include "runtime/cpu/Kernels.h"
#include "runtime/device/Registry.h"

namespace ampc::rt {
namespace {

using PreparedStep = rt::PreparedStep<KernelContext>;

double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
      .count();
}

class CpuProgram : public Program {
public:
  CpuProgram(std::vector<PreparedStep> steps, bool profiling)
      : steps_(std::move(steps)), profiling_(profiling) {}

  void run(const RunFlags &flags) override {
    if (profiling_)
      return runProfiled(flags);
    for (PreparedStep &s : steps_)
      if (s.runsIn(flags))
        s.run();
  }

  void runStep(size_t index) override { steps_[index].run(); }

  const Profile &profile() const override { return profile_; }

private:
  void runProfiled(const RunFlags &flags) {
    auto start = std::chrono::steady_clock::now();
    for (size_t i = 0; i < steps_.size(); ++i) {
      PreparedStep &s = steps_[i];
      if (!s.runsIn(flags))
        continue;
      auto t0 = std::chrono::steady_clock::now();
      s.run();
      double ms = msSince(t0);
      profile_.kernelMs[kernelName(s.context.step.kernel)] += ms;
      Profile::Launch &l = profile_.launchMs[i];
      l.end = i + 1;
      l.ms += ms;
    }
    profile_.runMs += msSince(start);
    ++profile_.runs;
  }

  std::vector<PreparedStep> steps_;
  bool profiling_;
  Profile profile_;
};

class CpuBackend : public Backend {
public:
  std::string name() const override { return "cpu"; }
  const Target &target() const override { return cpuTarget(); }
  /// Its kernels read rounded inputs or not, and lists in order or not;
  /// offsets must keep its 64-byte alignment.
  bool accepts(const Target &plan) const override {
    return plan.name == "cpu" && plan.alignment % cpuTarget().alignment == 0;
  }
  Device &device() override { return device_; }
  std::vector<std::string> kernelNames() const override { return kernels().names(); }

  std::unique_ptr<Program> prepare(const Plan &plan, const PlanMemory &memory,
                                   const ExecOptions &options) override {
    auto steps = prepareSteps(plan, memory, options, kernels(),
                              [](KernelContext base) { return base; });
    return std::make_unique<CpuProgram>(std::move(steps), options.profile);
  }

private:
  CpuDevice device_;
};

} // namespace

void registerCpuBackend() {
  registerBackend("cpu", [] { return std::make_unique<CpuBackend>(); });
}

} // namespace ampc::rt
