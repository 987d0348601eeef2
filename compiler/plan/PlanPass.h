// One interface for the plan optimizer's passes (docs/architecture.md,
// "The plan optimizer"): a pass is its name, when it applies, and `run` on
// a plan index. The passes and their order are the rows of
// compiler/plan/PlanPasses.def; each pass is one file that defines its
// descriptor.
#ifndef AMPC_COMPILER_PLAN_PLANPASS_H
#define AMPC_COMPILER_PLAN_PLANPASS_H

#include <string_view>
#include <vector>

#include "compiler/plan/PlanIndex.h"
#include "compiler/plan/PlanOptions.h"
#include "runtime/core/StepVariants.h"
#include "runtime/core/Target.h"

namespace ampc::plan {

/// What decides whether a pass runs besides the plan.
struct PassContext {
  const rt::Target &target;
  const PlanOptions &options;
  /// Whether the plan gets numerics probes: fusions would hide the step
  /// whose value a probe names, so they stay out.
  bool probed() const { return options.probes.mode != ProbeOptions::Mode::None; }
};

struct PlanPass {
  /// The name `--no-fuse` knows the pass by, or the name of a step of the
  /// lowering that always runs.
  const char *name;
  /// One line for help texts: what turning the fusion off keeps apart.
  const char *summary;
  /// Whether `--no-fuse` can leave the pass out.
  bool switchable;
  /// Whether the rewritten plan computes the same bits as the plan before
  /// (else its results agree within the kernels' tolerance).
  bool exact;
  /// Whether the pass runs for this target and these options.
  bool (*appliesTo)(const PassContext &);
  /// Rewrites the plan; null for a switch of a pass outside the plan.
  void (*run)(PlanIndex &, const PassContext &);
};

#define PLAN_PASS(descriptor) extern const PlanPass descriptor;
#include "compiler/plan/PlanPasses.def"

/// The rows of PlanPasses.def, in order.
const std::vector<const PlanPass *> &planPasses();

/// The switchable pass called `name`, or null.
const PlanPass *findFusion(std::string_view name);

/// The switchable passes' names, in table order.
std::vector<std::string> fusionNames();

/// Predicates that passes' `appliesTo` share.
bool always(const PassContext &);
bool unprobed(const PassContext &);
bool epilogueTarget(const PassContext &);
bool unprobedEpilogueTarget(const PassContext &);
bool unprobedChainTarget(const PassContext &);

} // namespace ampc::plan

#endif
