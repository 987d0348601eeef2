// Storage groups for memory planning: buffers that may share memory join one
// storage. The output of an aliasing kernel (reshape, flatten, identity)
// joins its input's storage; each output of an in-place kernel joins the
// storage of a different same-sized, same-dtype temporary input whose
// storage dies at that step; output k of a list kernel (check_finite_and_unscale) joins list
// input k's storage when that input dies there. The outputs of a collective
// (all_reduce) join their inputs' storages likewise, and those storages form
// a pack, laid out one after another. Which kernels do what is in the
// kernel traits table.
#include <algorithm>
#include <numeric>

#include "runtime/core/KernelTraits.h"
#include "runtime/core/MemoryPlannerParts.h"

namespace ampc::rt::planner {

StorageGroups groupStorages(const Plan &plan, const LiveRanges &live) {
  int n = plan.buffers.size(), steps = plan.steps.size(), stride = live.stride;
  StorageGroups g;
  g.root.resize(n);
  std::iota(g.root.begin(), g.root.end(), 0);
  g.members.resize(n);
  for (int i = 0; i < n; ++i)
    g.members[i] = {i};
  auto join = [&](int buffer, int into) {
    int r = g.root[into];
    g.root[buffer] = r;
    g.members[r].push_back(buffer);
  };
  auto storageEnd = [&](int r) {
    int end = -1;
    for (int m : g.members[r])
      end = std::max(end, live.last[m]);
    return end;
  };
  auto inArena = [&](int id) { return !plan.buffers[id].isPersistent(); };
  auto sameTemp = [&](int in, int out) {
    const Buffer &ib = plan.buffers[in], &ob = plan.buffers[out];
    return ib.kind == BufferKind::Temp && ib.dtype == ob.dtype && ib.bytes == ob.bytes;
  };

  for (int i = 0; i < steps; ++i) {
    const Step &s = plan.steps[i];
    const KernelTraits *traits = &traitsOf(s.kernel);
    if (!traits)
      continue;
    int at = i * stride;
    if (traits->has(kPacksList)) {
      std::vector<int> pack;
      for (size_t k = 0; k < s.outputs.size() && k < s.inputs.size(); ++k) {
        int in = s.inputs[k], out = s.outputs[k];
        if (sameTemp(in, out) && storageEnd(g.root[in]) == at)
          join(out, in);
        int r = g.root[out];
        bool packed = std::find(pack.begin(), pack.end(), r) != pack.end();
        for (const std::vector<int> &other : g.packs)
          packed = packed || std::find(other.begin(), other.end(), r) != other.end();
        if (inArena(out) && !packed)
          pack.push_back(r);
      }
      if (pack.size() > 1)
        g.packs.push_back(std::move(pack));
      continue;
    }
    if (traits->has(kInOrderList)) {
      bool inOrder = plan.target.inOrderLists;
      for (size_t k = 0; k + 1 < s.outputs.size() && k < s.inputs.size(); ++k) {
        int in = s.inputs[k], out = s.outputs[k];
        if (sameTemp(in, out) && storageEnd(g.root[in]) == at + (inOrder ? (int)k : 0))
          join(out, in);
      }
      continue;
    }
    if (traits->has(kInPlace)) {
      // Each output may take a different input's storage (an elementwise
      // chain stores several values, each element after reading all of its
      // operands).
      std::vector<int> taken; // storages an output took
      for (int out : s.outputs)
        for (int in : s.inputs)
          if (sameTemp(in, out) && storageEnd(g.root[in]) == at &&
              std::find(taken.begin(), taken.end(), g.root[in]) == taken.end()) {
            taken.push_back(g.root[in]);
            join(out, in);
            break;
          }
      continue;
    }
    if (s.outputs.size() != 1)
      continue;
    int out = s.outputs[0];
    if (traits->has(kAliasesInput) && s.inputs.size() == 1 && inArena(s.inputs[0]) &&
        plan.buffers[s.inputs[0]].bytes == plan.buffers[out].bytes) {
      join(out, s.inputs[0]);
    }
  }
  return g;
}

} // namespace ampc::rt::planner
