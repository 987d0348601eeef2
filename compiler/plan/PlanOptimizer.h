// The plan optimizer (docs/architecture.md, "The plan optimizer"): the
// passes of compiler/plan/PlanPasses.def run in order on a lowered plan.
// Needs only runtime/core, so that a program without MLIR can optimise a
// plan too.
#ifndef AMPC_COMPILER_PLAN_PLANOPTIMIZER_H
#define AMPC_COMPILER_PLAN_PLANOPTIMIZER_H

#include "compiler/plan/PlanOptions.h"
#include "runtime/core/Plan.h"

namespace ampc::plan {

/// Runs each pass of the table that applies to the plan's target and
/// `options` and is not left out, committing its rewrites before the next:
/// the fusions, then the fixed steps (unused temporaries dropped, probes,
/// counters, memory planning). The plan comes straight from the lowering:
/// one step per graph node, `round_inputs` on readers of fused weight
/// casts, no arena offsets.
void optimizePlan(rt::Plan &plan, const PlanOptions &options);

} // namespace ampc::plan

#endif
