// Live ranges for memory planning. Step i spans positions i*stride ..
// i*stride+stride-1 (stride: one more than the most inputs of any step). A
// kernel that consumes its list in order (check_finite_and_unscale, on a
// target that honours in-order lists) last reads input k, and writes output
// k, at position i*stride+k: a result can take the memory of list entries
// already consumed in the same step. Inputs live through the whole run (a
// driver may set one, such as the learning rate, once for many runs); graph
// outputs and the loss live to the end.
#include <algorithm>
#include <climits>

#include "runtime/core/KernelTraits.h"
#include "runtime/core/MemoryPlannerParts.h"

namespace ampc::rt::planner {

LiveRanges liveRanges(const Plan &plan) {
  int n = plan.buffers.size(), steps = plan.steps.size();
  LiveRanges r;
  for (const Step &s : plan.steps)
    r.stride = std::max<int>(r.stride, s.inputs.size() + 1);
  r.end = steps * r.stride;
  r.def.assign(n, INT_MAX);
  r.last.assign(n, -1);
  for (int id : plan.inputs) {
    r.def[id] = -1;
    r.last[id] = r.end;
  }
  for (int i = 0; i < steps; ++i) {
    const Step &s = plan.steps[i];
    const KernelTraits *traits = &traitsOf(s.kernel);
    bool inOrder = traits && traits->has(kInOrderList) && plan.target.inOrderLists;
    for (size_t k = 0; k < s.outputs.size(); ++k)
      r.def[s.outputs[k]] = std::min<int>(r.def[s.outputs[k]], i * r.stride + (inOrder ? k : 0));
    for (size_t k = 0; k < s.inputs.size(); ++k)
      r.last[s.inputs[k]] = std::max<int>(r.last[s.inputs[k]], i * r.stride + (inOrder ? k : 0));
  }
  for (int id : plan.outputs)
    r.last[id] = std::max(r.last[id], r.end);
  if (plan.loss >= 0)
    r.last[plan.loss] = r.end;
  return r;
}

} // namespace ampc::rt::planner
