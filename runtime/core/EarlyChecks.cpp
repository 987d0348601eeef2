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
  if (check.kernel != "check_finite" || check.outputs.size() != 1)
    return {};
  auto writes = [&](const Step &s, int buffer) {
    return std::any_of(s.outputs.begin(), s.outputs.end(),
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
  std::vector<EarlyCheck> parts;
  int64_t bytes = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    if (parts.empty() || bytes >= minBytes) {
      parts.push_back({});
      bytes = 0;
    }
    parts.back().inputs.push_back(order[k]);
    parts.back().after = writer[order[k]];
    bytes += plan.buffers[check.inputs[order[k]]].bytes;
  }
  // Every input of a part is final after its last writer: parts that end
  // at the same step are one.
  std::vector<EarlyCheck> merged;
  for (EarlyCheck &p : parts) {
    if (!merged.empty() && merged.back().after == p.after)
      merged.back().inputs.insert(merged.back().inputs.end(), p.inputs.begin(), p.inputs.end());
    else
      merged.push_back(std::move(p));
  }
  if (merged.size() < 2)
    return {};
  return merged;
}

} // namespace ampc::rt
