// Weight copies refreshed by their updates (docs/performance.md, "Fusions").
//
// Algorithm: each `assign(copy, p)` that refreshes a low-precision copy
// after the optimizer update of `p` (an O2 master's param, an O1 weight
// copy) folds into that update, which then writes the copy in the same
// pass (`writes_copy`, the copy as its last input). The update is the last
// one of `p` before the assign, in the same phase, with no step between
// them touching either buffer. An update skipped for a non-finite gradient
// leaves `p`, so its copy, as it was: the same bytes as the unconditional
// assign. Always runs: the copies exist only where casts are not fused.
#include <algorithm>

#include "compiler/plan/PlanPass.h"
#include "runtime/core/KernelSignatures.h"
#include "runtime/core/KernelTraits.h"

namespace ampc::plan {
namespace {

bool touches(const rt::Step &s, int id) {
  return std::count(s.inputs.begin(), s.inputs.end(), id) ||
         std::count(s.outputs.begin(), s.outputs.end(), id);
}

/// The update that the assign at `at` can fold into, or -1.
int updateBefore(const PlanIndex &index, int at) {
  const rt::Step &assign = index.step(at);
  int copy = assign.inputs[0], value = assign.inputs[1];
  const rt::Buffer &c = index.buffer(copy), &v = index.buffer(value);
  if (!rt::isFloat(c.dtype) || c.shape != v.shape)
    return -1;
  auto phase = [](const rt::Step &x) { return x.attrs.value("phase", ""); };
  for (int u = at - 1; u >= 0; --u) {
    if (index.erased(u))
      continue;
    const rt::Step &s = index.step(u);
    const rt::KernelTraits *traits = &rt::traitsOf(s.kernel);
    if (traits && traits->has(rt::kOptimizerUpdate) && s.inputs[0] == value)
      return phase(s) == phase(assign) && !s.attrs.contains(rt::attr::kWritesCopy) ? u : -1;
    if (touches(s, copy) || touches(s, value))
      return -1;
  }
  return -1;
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &s = index.step(i);
    if (s.kernel != rt::Kernel::Assign || s.inputs.size() != 2)
      continue;
    int u = updateBefore(index, i);
    if (u < 0)
      continue;
    rt::Step &update = index.edit(u);
    update.inputs.push_back(s.inputs[0]);
    update.attrs[rt::attr::kWritesCopy] = true;
    index.erase(i);
  }
}

} // namespace

const PlanPass updateCopies = {"update-copies", "", false, true, always, run};

} // namespace ampc::plan
