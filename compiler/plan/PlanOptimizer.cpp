#include "compiler/plan/PlanOptimizer.h"

#include "compiler/plan/PlanPass.h"

namespace ampc {

bool FusionSet::enabled(const plan::PlanPass &pass) const { return !off_.count(pass.name); }

void FusionSet::disable(const plan::PlanPass &pass) { off_.insert(pass.name); }

FusionSet FusionSet::allBut(const plan::PlanPass &pass) {
  FusionSet set;
  set.disable(pass);
  return set;
}

namespace plan {

// The switches of passes that run before the plan exists.
const PlanPass weightCopies = {
    "weight-copies", "O1 weights keep no f16 copies: the forward casts them", true, true, always,
    nullptr};
const PlanPass recompute = {"recompute",
                            "the backward keeps the forward's activations and layer-norm "
                            "copies instead of recomputing them",
                            true,
                            true,
                            always,
                            nullptr};

const std::vector<const PlanPass *> &planPasses() {
#define PLAN_PASS(descriptor) &descriptor,
  static const std::vector<const PlanPass *> passes = {
#include "compiler/plan/PlanPasses.def"
  };
  return passes;
}

const PlanPass *findFusion(std::string_view name) {
  for (const PlanPass *pass : planPasses())
    if (pass->switchable && name == pass->name)
      return pass;
  return nullptr;
}

std::vector<std::string> fusionNames() {
  std::vector<std::string> names;
  for (const PlanPass *pass : planPasses())
    if (pass->switchable)
      names.push_back(pass->name);
  return names;
}

bool always(const PassContext &) { return true; }
bool unprobed(const PassContext &c) { return !c.probed(); }
bool epilogueTarget(const PassContext &c) { return c.target.gemmEpilogues; }
bool unprobedEpilogueTarget(const PassContext &c) { return c.target.gemmEpilogues && !c.probed(); }
bool unprobedChainTarget(const PassContext &c) { return c.target.elementwiseChains && !c.probed(); }

void optimizePlan(rt::Plan &plan, const PlanOptions &options) {
  PassContext context{plan.target, options};
  for (const PlanPass *pass : planPasses()) {
    if (!pass->run || !pass->appliesTo(context) ||
        (pass->switchable && !options.fusions.enabled(*pass)))
      continue;
    PlanIndex index(plan);
    pass->run(index, context);
    index.commit();
  }
}

} // namespace plan
} // namespace ampc
