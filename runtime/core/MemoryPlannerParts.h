// The three parts of memory planning (MemoryPlanner.cpp), one file each.
#ifndef AMPC_RUNTIME_CORE_MEMORYPLANNERPARTS_H
#define AMPC_RUNTIME_CORE_MEMORYPLANNERPARTS_H

#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::rt::planner {

/// Each buffer's live range [def, last] over positions in the step order:
/// step i spans positions i*stride .. i*stride+stride-1.
struct LiveRanges {
  int stride = 1, end = 0;
  std::vector<int> def, last; // per buffer; def INT_MAX: never written
};
LiveRanges liveRanges(const Plan &plan);

/// Buffers that share one storage: `root[b]` names b's storage, whose
/// buffers are `members[root]`. `packs` lists storages (by root) to lay out
/// one after another, in order: the buckets of collectives.
struct StorageGroups {
  std::vector<int> root;
  std::vector<std::vector<int>> members;
  std::vector<std::vector<int>> packs;
};
StorageGroups groupStorages(const Plan &plan, const LiveRanges &live);

struct Storage {
  int64_t bytes = 0, offset = 0;
  int start, end;
};

/// Places the arena storages (indexed by root buffer id; `roots` lists
/// them) at aligned offsets; returns the arena size and sets `liveBytes`,
/// the most bytes live at once.
int64_t placeStorages(std::vector<Storage> &storages, const std::vector<int> &roots,
                      int64_t alignment, int64_t &liveBytes);

inline int64_t alignUp(int64_t v, int64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}

} // namespace ampc::rt::planner

#endif
