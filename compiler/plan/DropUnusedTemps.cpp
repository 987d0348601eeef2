// Unused temporaries dropped: the results the fusions folded away name no
// step any more and must not take arena space. Buffers are renumbered in
// order. Always runs, after the fusions.
#include <algorithm>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

void dropUnused(rt::Plan &plan) {
  std::vector<bool> used(plan.buffers.size(), false);
  for (const rt::Step &step : plan.steps)
    for (const std::vector<int> *ids : {&step.inputs, &step.outputs})
      for (int id : *ids)
        used[id] = true;
  for (int id : plan.outputs)
    used[id] = true;
  if (plan.loss >= 0)
    used[plan.loss] = true;
  std::vector<int> newId(plan.buffers.size(), -1);
  std::vector<rt::Buffer> buffers;
  for (rt::Buffer &b : plan.buffers)
    if (used[b.id] || b.kind != rt::BufferKind::Temp) {
      newId[b.id] = buffers.size();
      b.id = buffers.size();
      buffers.push_back(std::move(b));
    }
  plan.buffers = std::move(buffers);
  auto renumber = [&](int &id) {
    if (id >= 0)
      id = newId[id];
  };
  for (rt::Step &step : plan.steps) {
    std::for_each(step.inputs.begin(), step.inputs.end(), renumber);
    std::for_each(step.outputs.begin(), step.outputs.end(), renumber);
  }
  std::for_each(plan.inputs.begin(), plan.inputs.end(), renumber);
  std::for_each(plan.outputs.begin(), plan.outputs.end(), renumber);
  renumber(plan.loss);
  for (rt::Buffer &b : plan.buffers)
    renumber(b.copyOf);
}

void run(PlanIndex &index, const PassContext &) { dropUnused(index.rewrite()); }

} // namespace

const PlanPass dropUnusedTemps = {"drop-unused-temps", "", false, true, always, run};

} // namespace ampc::plan
