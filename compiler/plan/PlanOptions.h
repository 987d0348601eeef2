// What the plan optimizer is asked for (compiler/plan/PlanOptimizer.h):
// numerics probes, and the fusions `--no-fuse` leaves out.
#ifndef AMPC_COMPILER_PLAN_PLANOPTIONS_H
#define AMPC_COMPILER_PLAN_PLANOPTIONS_H

#include <set>
#include <string>

namespace ampc {

struct ProbeOptions {
  enum class Mode { None, NonFinite, Ranges };
  Mode mode = Mode::None;
  /// The low-precision dtype whose range the ranges are measured against.
  std::string lowDtype = "f16";
};

namespace plan {
struct PlanPass;
}

/// The fusions left out, by their `--no-fuse` names (the rows of
/// compiler/plan/PlanPasses.def); every other fusion is on.
class FusionSet {
public:
  bool enabled(const plan::PlanPass &pass) const;
  void disable(const plan::PlanPass &pass);
  /// Every fusion but `pass`: the plan of separate steps a fusion is held to.
  static FusionSet allBut(const plan::PlanPass &pass);

private:
  std::set<std::string> off_;
};

struct PlanOptions {
  PlanOptions() = default;
  PlanOptions(ProbeOptions probes, FusionSet fusions = {})
      : probes(std::move(probes)), fusions(std::move(fusions)) {}
  PlanOptions(FusionSet fusions) : fusions(std::move(fusions)) {}

  ProbeOptions probes;
  FusionSet fusions;
};

} // namespace ampc

#endif
