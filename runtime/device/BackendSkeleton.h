// What every backend shares (docs/architecture.md, "One backend skeleton"):
// the context a kernel function gets, the registry of a backend's kernel
// functions by rt::Kernel, and the prepare loop that binds each plan step
// once (its kernel, its decoded attributes, its buffers, its phase). A
// backend adds what its kernels need to the context (CUDA: the device,
// per-step state) and decides how a program runs its prepared steps.
#ifndef AMPC_RUNTIME_DEVICE_BACKENDSKELETON_H
#define AMPC_RUNTIME_DEVICE_BACKENDSKELETON_H

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "runtime/core/Errors.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/device/Backend.h"

namespace ampc::rt {

/// One step as its kernel function sees it: attributes decoded and buffers
/// bound once, when the backend prepares the plan.
struct KernelContext {
  const Step &step;
  StepAttrs attrs;
  std::vector<TensorRef> in, out;
  bool training = false;
  uint64_t seed = 0;
  /// The step's position in the plan, for errors a device reports later.
  int index = 0;
  /// The ranks `all_reduce` sums over (null: one rank).
  Communicator *communicator = nullptr;
  [[noreturn]] void fail(const std::string &what) const {
    throw RuntimeError("step '" + step.name + "' (" + kernelName(step.kernel) + "): " + what);
  }
};

/// Step `index` of `plan` bound to its buffers at `memory`, with the run's
/// options.
inline KernelContext bindStep(const Plan &plan, const PlanMemory &memory,
                              const ExecOptions &options, size_t index) {
  const Step &s = plan.steps[index];
  KernelContext c{s, StepAttrs(s), {}, {}, options.training, options.seed, (int)index,
                  options.communicator};
  for (int id : s.inputs)
    c.in.push_back(bufferRef(plan, memory, id));
  for (int id : s.outputs)
    c.out.push_back(bufferRef(plan, memory, id));
  return c;
}

/// A backend's kernel functions, one slot per plan kernel, filled by its
/// kernel files: `t[Kernel::Add] = add;`.
template <typename Fn> class KernelRegistry {
public:
  Fn &operator[](Kernel k) { return fns_[static_cast<size_t>(k)]; }
  /// Registers `fn` for every kernel `which(kernel)` holds for (the unary
  /// kernels, the binary ones: one function decoding the step's own).
  template <typename Which> void addEach(Which which, Fn fn) {
    for (size_t i = 0; i < fns_.size(); ++i)
      if (which(static_cast<Kernel>(i)))
        fns_[i] = fn;
  }
  /// The function of `k`, or null where the backend has none.
  Fn find(Kernel k) const { return fns_[static_cast<size_t>(k)]; }
  /// The names of the kernels it has, sorted.
  std::vector<std::string> names() const {
    std::vector<std::string> all;
    for (size_t i = 0; i < fns_.size(); ++i)
      if (fns_[i])
        all.push_back(kernelName(static_cast<Kernel>(i)));
    std::sort(all.begin(), all.end());
    return all;
  }

private:
  std::array<Fn, kKernelCount> fns_{};
};

/// A plan step ready to run: its kernel function with its context.
template <typename Context> struct PreparedStep {
  void (*kernel)(Context &);
  Context context;
  Phase phase;
  bool runsIn(const RunFlags &flags) const { return rt::runsIn(phase, flags); }
  void run() { kernel(context); }
};

/// Every step of `plan`, in order, with its function from `kernels` and the
/// context `bind(KernelContext)` makes of its bound base (the executor has
/// checked that `kernels` has each step's kernel).
template <typename Context, typename Bind>
std::vector<PreparedStep<Context>>
prepareSteps(const Plan &plan, const PlanMemory &memory, const ExecOptions &options,
             const KernelRegistry<void (*)(Context &)> &kernels, Bind bind) {
  std::vector<PreparedStep<Context>> steps;
  steps.reserve(plan.steps.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    KernelContext base = bindStep(plan, memory, options, i);
    Phase phase = base.attrs.phase();
    steps.push_back({kernels.find(plan.steps[i].kernel), bind(std::move(base)), phase});
  }
  return steps;
}

} // namespace ampc::rt

#endif
