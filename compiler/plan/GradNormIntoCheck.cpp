// The gradients' norm in the finite check's pass (docs/training.md,
// "Gradient clipping").
//
// Algorithm: a `grad_norm` step N (scale, gradients) whose gradients are
// those of a `check_finite` step C before it, in the same phase, becomes a
// `check_finite_norm` (scale, C's gradients -> N's norm, C's found_inf) in
// N's place, and C goes: one pass over the gradients reads each once for
// both. It waits for N's place because the scale (the constant 1 of an
// unscaled run) may be written after C; no step between them may read C's
// flag or write a gradient. Every target: the CPU's fused kernel sums as
// grad_norm does, in C's order.
#include <algorithm>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

/// The same buffers, whatever their order.
bool sameSet(std::vector<int> a, std::vector<int> b) {
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return a == b;
}

void run(PlanIndex &index, const PassContext &) {
  for (int n = 0; n < index.numSteps(); ++n) {
    const rt::Step &norm = index.step(n);
    if (index.erased(n) || norm.kernel != rt::Kernel::GradNorm || norm.inputs.size() < 2)
      continue;
    std::vector<int> grads(norm.inputs.begin() + 1, norm.inputs.end());
    for (int c = n - 1; c >= 0; --c) {
      const rt::Step &check = index.step(c);
      if (index.erased(c) || check.kernel != rt::Kernel::CheckFinite || check.outputs.size() != 1)
        continue;
      int found = check.outputs[0];
      const std::vector<int> &readers = index.readers(found);
      bool flagRead = std::any_of(readers.begin(), readers.end(),
                                  [&](int r) { return r > c && r < n; });
      if (!sameSet(check.inputs, grads) || flagRead || index.writtenBetween(grads, c, n) ||
          check.attrs.value("phase", "") != norm.attrs.value("phase", ""))
        break;
      rt::Step fused = norm;
      fused.kernel = rt::Kernel::CheckFiniteNorm;
      fused.inputs = {norm.inputs[0]};
      fused.inputs.insert(fused.inputs.end(), check.inputs.begin(), check.inputs.end());
      fused.outputs = {norm.outputs[0], found};
      index.edit(n) = std::move(fused);
      index.erase(c);
      break;
    }
  }
}

} // namespace

const PlanPass gradNormIntoCheck = {"grad-norm", "", false, true, always, run};

} // namespace ampc::plan
