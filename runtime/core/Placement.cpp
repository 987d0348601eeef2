// Placement for memory planning: each arena storage goes at the lowest
// aligned offset that no placed storage with an overlapping live range uses
// (first fit), or in the smallest such gap (best fit). Three orders are
// tried, each both ways: largest first; longest-lived first; most bytes live
// around it first (the storages of the peak pack first). The smallest arena
// wins.
#include <algorithm>
#include <climits>
#include <map>

#include "runtime/core/MemoryPlannerParts.h"

namespace ampc::rt::planner {
namespace {

/// Greedy placement in a given order; returns the arena size.
int64_t place(std::vector<Storage> &storages, const std::vector<int> &order, bool bestFit,
              int64_t alignment) {
  std::vector<int> placed;
  int64_t arena = 0;
  std::vector<const Storage *> overlapping;
  for (int id : order) {
    Storage &s = storages[id];
    overlapping.clear();
    for (int p : placed)
      if (storages[p].start <= s.end && s.start <= storages[p].end)
        overlapping.push_back(&storages[p]);
    std::sort(overlapping.begin(), overlapping.end(),
              [](const Storage *a, const Storage *b) { return a->offset < b->offset; });
    int64_t offset = 0, best = -1, bestGap = INT64_MAX;
    for (const Storage *p : overlapping) {
      if (offset + s.bytes <= p->offset) {
        if (!bestFit) {
          best = offset;
          break;
        }
        if (p->offset - offset < bestGap) {
          bestGap = p->offset - offset;
          best = offset;
        }
      }
      offset = std::max(offset, alignUp(p->offset + p->bytes, alignment));
    }
    s.offset = best >= 0 ? best : offset;
    arena = std::max(arena, alignUp(s.offset + s.bytes, alignment));
    placed.push_back(id);
  }
  return arena;
}

} // namespace

int64_t placeStorages(std::vector<Storage> &storages, const std::vector<int> &roots,
                      int64_t alignment, int64_t &liveBytes) {
  // The live bytes over the step and, per storage, the most bytes live at
  // once during its life.
  std::map<int, int64_t> delta;
  for (int r : roots) {
    delta[storages[r].start] += storages[r].bytes;
    delta[storages[r].end + 1] -= storages[r].bytes;
  }
  std::vector<std::pair<int, int64_t>> live; // (position, bytes from there)
  int64_t current = 0;
  liveBytes = 0;
  for (auto [at, d] : delta) {
    live.push_back({at, current += d});
    liveBytes = std::max(liveBytes, current);
  }
  auto pressure = [&](const Storage &s) {
    auto it = std::upper_bound(live.begin(), live.end(), std::make_pair(s.start, INT64_MAX));
    int64_t most = it == live.begin() ? 0 : std::prev(it)->second;
    for (; it != live.end() && it->first <= s.end; ++it)
      most = std::max(most, it->second);
    return most;
  };
  std::vector<int64_t> pressureOf(storages.size(), 0);
  for (int r : roots)
    pressureOf[r] = pressure(storages[r]);
  std::vector<std::vector<int>> orders(3, roots);
  std::stable_sort(orders[0].begin(), orders[0].end(), [&](int a, int b) {
    return storages[a].bytes > storages[b].bytes;
  });
  std::stable_sort(orders[1].begin(), orders[1].end(), [&](int a, int b) {
    int64_t la = storages[a].end - storages[a].start, lb = storages[b].end - storages[b].start;
    return la != lb ? la > lb : storages[a].bytes > storages[b].bytes;
  });
  std::stable_sort(orders[2].begin(), orders[2].end(), [&](int a, int b) {
    return pressureOf[a] != pressureOf[b] ? pressureOf[a] > pressureOf[b]
                                          : storages[a].bytes > storages[b].bytes;
  });
  int64_t arena = INT64_MAX;
  std::pair<int, bool> bestWay;
  for (int o = 0; o < 3; ++o)
    for (bool bestFit : {false, true})
      if (int64_t size = place(storages, orders[o], bestFit, alignment); size < arena) {
        arena = size;
        bestWay = {o, bestFit};
      }
  place(storages, orders[bestWay.first], bestWay.second, alignment); // the winner's offsets
  return arena;
}

} // namespace ampc::rt::planner
