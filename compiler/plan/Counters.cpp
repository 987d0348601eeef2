// The plan's counters (docs/runtime.md, "Counters"): steps that read the
// run counter (dropout, attention with dropout) get it as their last input and a last
// step advances it; the count of skipped steps adds the finite check's
// flag, in the check's phase. Both are device state, so a captured step
// advances them without the host. Always runs, after the probes.
#include "compiler/plan/PlanPass.h"
#include "runtime/core/KernelTraits.h"

namespace ampc::plan {
namespace {

/// A new i64 scalar state buffer called `name` (or `name.N` if taken).
int addCounter(rt::Plan &plan, const std::string &name) {
  std::string unique = name;
  for (int k = 1; plan.find(unique) >= 0; ++k)
    unique = name + "." + std::to_string(k);
  return plan.addBuffer(unique, rt::BufferKind::State, rt::DType::I64, {});
}

void addCounters(rt::Plan &plan) {
  int check = -1;
  std::vector<int> readers;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::KernelTraits *traits = &rt::traitsOf(plan.steps[i].kernel);
    if (rt::readsIteration(plan.steps[i]))
      readers.push_back(i);
    if (traits && traits->has(rt::kFlagsNonFinite) && !plan.steps[i].outputs.empty())
      check = i;
  }
  if (check >= 0) {
    plan.skippedSteps = addCounter(plan, "skipped_steps");
    rt::Step count{"skipped_steps.count",
                   rt::Kernel::Increment,
                   {plan.skippedSteps, plan.steps[check].outputs.back()},
                   {},
                   rt::Json::object()};
    if (plan.steps[check].attrs.contains("phase"))
      count.attrs["phase"] = plan.steps[check].attrs["phase"];
    plan.steps.push_back(std::move(count));
  }
  if (!readers.empty()) {
    plan.iteration = addCounter(plan, "iteration");
    for (int i : readers)
      plan.steps[i].inputs.push_back(plan.iteration);
    plan.steps.push_back(
        {"iteration.advance", rt::Kernel::Increment, {plan.iteration}, {}, rt::Json::object()});
  }
}

void run(PlanIndex &index, const PassContext &) { addCounters(index.rewrite()); }

} // namespace

const PlanPass counters = {"counters", "", false, true, always, run};

} // namespace ampc::plan
