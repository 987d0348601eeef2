// Splits a finite check into parts by the last writer of each gradient
// (EarlyChecks.h). One backward walk per input: the plan's steps are in
// execution order, so the last step before the check whose outputs share
// memory with an input is the one after which that input is final.
#include "runtime/core/EarlyChecks.h"

#include <algorithm>
#include <numeric>

namespace ampc::rt {

std::vector<EarlyCheck> earlyChecks(const Plan &plan, size_t index, int64_t minBytes) {
  const Step &check = plan.steps.at(index);
  if (check.kernel != Kernel::CheckFinite || check.outputs.size() != 1)
    return {};
  // A step without results writes its operands in place (assign,
  // accumulate), as the plan-level fusions count it.
  auto writes = [&](const Step &s, int buffer) {
    const std::vector<int> &written = s.outputs.empty() ? s.inputs : s.outputs;
    return std::any_of(written.begin(), written.end(),
                       [&](int o) { return buffersOverlap(plan, o, buffer); });
  };
  std::vector<size_t> writer(check.inputs.size());
  for (size_t i = 0; i < check.inputs.size(); ++i) {
    size_t j = index;
    while (j > 0 && !writes(plan.steps[j - 1], check.inputs[i]))
      --j;
    if (j == 0)
      return {};
    writer[i] = j - 1;
  }
  std::vector<int> order(check.inputs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return writer[a] < writer[b]; });
  // A part closes once it holds minBytes, at the next writer: inputs final
  // after the same step share a part.
  std::vector<EarlyCheck> parts;
  int64_t bytes = 0;
  for (int k : order) {
    if (parts.empty() || (bytes >= minBytes && parts.back().after != writer[k])) {
      parts.push_back({writer[k], {}});
      bytes = 0;
    }
    parts.back().inputs.push_back(k);
    parts.back().after = writer[k];
    bytes += plan.buffers[check.inputs[k]].bytes;
  }
  if (parts.size() < 2)
    return {};
  return parts;
}

} // namespace ampc::rt
