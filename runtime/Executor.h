// Runs a plan on the CPU: one arena for inputs and temporaries, a persistent
// region for params and consts, and the steps in order.
#ifndef AMPC_RUNTIME_EXECUTOR_H
#define AMPC_RUNTIME_EXECUTOR_H

#include <cstdlib>
#include <map>
#include <memory>

#include "runtime/Kernels.h"
#include "runtime/Plan.h"

namespace ampc::rt {

struct ExecOptions {
  /// Dropout drops and batch norm uses (and updates) batch statistics.
  bool training = false;
  uint64_t seed = 0;
  /// Times every step (see Executor::profile).
  bool profile = false;
};

class Executor {
public:
  /// Checks every step's kernel and allocates memory; consts are loaded and
  /// params initialised from their init specs with `options.seed`.
  explicit Executor(Plan plan, ExecOptions options = {});

  const Plan &plan() const { return plan_; }
  TensorRef tensor(int id) const;
  /// The buffer called `name`; throws RuntimeError if there is none.
  TensorRef tensor(const std::string &name) const;

  /// (Re)initialises every param from its init spec.
  void initParams(uint64_t seed);
  /// Runs the steps once. With gradient accumulation, steps of the `apply`
  /// phase (the optimizer) run only when `apply`, and steps of the `first`
  /// phase (state backups) only when `first`: the last and the first
  /// micro-batch of a window. Throws RuntimeError naming the step on failure.
  void run(bool apply = true, bool first = true);
  uint64_t iterations() const { return iteration_; }
  /// Restores the run count (it keys dropout's random streams) on resume.
  void setIterations(uint64_t n) { iteration_ = n; }
  /// With ExecOptions::profile: milliseconds spent per kernel name, summed over runs.
  const std::map<std::string, double> &profile() const { return profile_; }

private:
  struct Free {
    void operator()(void *p) const { std::free(p); }
  };
  Plan plan_;
  ExecOptions options_;
  std::unique_ptr<std::byte, Free> arena_, persistent_;
  std::vector<KernelFn> kernels_;
  std::vector<bool> applyOnly_, firstOnly_;
  uint64_t iteration_ = 0;
  std::map<std::string, double> profile_;
};

/// Fan-in and fan-out of a parameter shape ([in, out] matrices, [Cout, ...]
/// filters), for xavier and kaiming initialisation.
std::pair<double, double> fans(const std::vector<int64_t> &shape);

} // namespace ampc::rt

#endif
