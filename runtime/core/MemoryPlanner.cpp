// Memory planning (planMemory in MemoryPlanner.h).
//
// Algorithm: compute each buffer's live range over positions in the step
// order (LiveRanges.cpp); group buffers that may share memory into storages,
// following the kernel traits for aliasing and in-place kernels
// (StorageGroups.cpp); lay persistent buffers (params, consts, state) out one
// after another; merge each pack of storages (a collective's bucket) into
// one; place the arena storages greedily by liveness, keeping the smallest of
// several orders (Placement.cpp). Offsets are multiples of the
// plan target's alignment.
#include "runtime/core/MemoryPlanner.h"

#include <algorithm>
#include <climits>

#include "runtime/core/MemoryPlannerParts.h"

namespace ampc::rt {

using namespace planner;

void planMemory(Plan &plan) {
  int n = plan.buffers.size();
  int64_t alignment = plan.target.alignment;
  LiveRanges live = liveRanges(plan);
  StorageGroups groups = groupStorages(plan, live);

  int64_t persistent = 0;
  for (Buffer &b : plan.buffers)
    if (b.isPersistent()) {
      b.offset = persistent;
      persistent = alignUp(persistent + b.bytes, alignment);
    }
  plan.persistentBytes = persistent;

  std::vector<Storage> storages(n, Storage{0, 0, INT_MAX, -1});
  std::vector<int> roots;
  int64_t unshared = 0;
  for (int id = 0; id < n; ++id) {
    if (plan.buffers[id].isPersistent())
      continue;
    unshared += alignUp(plan.buffers[id].bytes, alignment);
    Storage &s = storages[groups.root[id]];
    int def = live.def[id] == INT_MAX ? -1 : live.def[id];
    s.bytes = std::max(s.bytes, plan.buffers[id].bytes);
    s.start = std::min(s.start, def);
    s.end = std::max({s.end, live.last[id], def});
    if (groups.root[id] == id)
      roots.push_back(id);
  }
  // A pack (a collective's bucket) is one storage, its members one after
  // another, live from the first member's definition to the last one's use.
  std::vector<int64_t> within(n, 0);
  for (const std::vector<int> &pack : groups.packs) {
    Storage whole{0, 0, INT_MAX, -1};
    for (int r : pack) {
      within[r] = whole.bytes;
      whole.bytes += alignUp(storages[r].bytes, alignment);
      whole.start = std::min(whole.start, storages[r].start);
      whole.end = std::max(whole.end, storages[r].end);
    }
    storages[pack[0]] = whole;
    roots.erase(std::remove_if(roots.begin(), roots.end(),
                               [&](int r) {
                                 return r != pack[0] &&
                                        std::find(pack.begin(), pack.end(), r) != pack.end();
                               }),
                roots.end());
  }
  plan.arenaBytes = placeStorages(storages, roots, alignment, plan.liveBytes);
  for (const std::vector<int> &pack : groups.packs)
    for (int r : pack)
      storages[r].offset = storages[pack[0]].offset + within[r];
  for (int id = 0; id < n; ++id)
    if (!plan.buffers[id].isPersistent())
      plan.buffers[id].offset = storages[groups.root[id]].offset;
  plan.unsharedBytes = unshared;
}

Plan withoutReuse(Plan plan) {
  int64_t offset = 0, alignment = plan.target.alignment;
  for (Buffer &b : plan.buffers)
    if (!b.isPersistent()) {
      b.offset = offset;
      offset += (b.bytes + alignment - 1) / alignment * alignment;
    }
  plan.arenaBytes = offset;
  return plan;
}

} // namespace ampc::rt
