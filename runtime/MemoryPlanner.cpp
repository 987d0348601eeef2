// Memory planning (planMemory in runtime/Plan.h).
//
// Algorithm: compute each buffer's live range [definition, last use] over
// positions in the step order: step i spans positions i*M .. i*M+M-1. A
// check_finite_and_unscale processes its gradient list in order, so its k-th
// gradient is last read, and its k-th result written, at position i*M+k: a
// result can take the memory of gradients already consumed in the same step.
// Inputs live through the whole run (a driver may set one, such as the
// learning rate, once for many runs); graph outputs live to the end.
// Group buffers into storages: the output of reshape/flatten/identity joins
// its input's storage, and an elementwise step's output (or an unscaled
// gradient of check_finite_and_unscale) joins the storage of a same-sized,
// same-dtype input whose storage dies at that step (in place).
// Persistent buffers (params, consts) are laid out one after another. The
// arena storages are placed greedily, each at the lowest aligned offset that
// no placed storage with an overlapping live range uses (or in the smallest
// such gap), in three orders (largest first; longest-lived first; most bytes
// live around it first), keeping the smallest arena.
#include <algorithm>
#include <climits>
#include <numeric>
#include <map>
#include <set>

#include "runtime/Plan.h"

namespace ampc::rt {
namespace {

int64_t alignUp(int64_t v) { return (v + kAlignment - 1) / kAlignment * kAlignment; }

const std::set<std::string> &aliasKernels() {
  static const std::set<std::string> k = {"reshape", "flatten", "identity"};
  return k;
}

const std::set<std::string> &inPlaceKernels() {
  static const std::set<std::string> k = {
      "add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs", "scale",
      "relu", "gelu", "tanh", "sigmoid", "dropout", "exp", "log", "sqrt", "rsqrt",
      "square", "pow",
      "unary_backward",
      // Row kernels that read a row's elements before writing the same ones.
      "softmax_backward", "softmax_cross_entropy_backward"};
  return k;
}

struct Storage {
  int64_t bytes = 0, offset = 0;
  int start = INT_MAX, end = -1;
};

} // namespace

void planMemory(Plan &plan) {
  int n = plan.buffers.size(), steps = plan.steps.size();
  int stride = 1;
  for (const Step &s : plan.steps)
    stride = std::max<int>(stride, s.inputs.size() + 1);
  auto inOrder = [&](const Step &s) { return s.kernel == "check_finite_and_unscale"; };
  int end = steps * stride;
  std::vector<int> def(n, INT_MAX), last(n, -1);
  for (int id : plan.inputs) {
    def[id] = -1;
    last[id] = end;
  }
  for (int i = 0; i < steps; ++i) {
    const Step &s = plan.steps[i];
    for (size_t k = 0; k < s.outputs.size(); ++k)
      def[s.outputs[k]] = std::min<int>(def[s.outputs[k]], i * stride + (inOrder(s) ? k : 0));
    for (size_t k = 0; k < s.inputs.size(); ++k)
      last[s.inputs[k]] = std::max<int>(last[s.inputs[k]], i * stride + (inOrder(s) ? k : 0));
  }
  for (int id : plan.outputs)
    last[id] = std::max(last[id], end);
  if (plan.loss >= 0)
    last[plan.loss] = end;

  std::vector<int> root(n);
  std::iota(root.begin(), root.end(), 0);
  std::vector<std::vector<int>> members(n);
  for (int i = 0; i < n; ++i)
    members[i] = {i};
  auto join = [&](int buffer, int into) {
    int r = root[into];
    root[buffer] = r;
    members[r].push_back(buffer);
  };
  auto storageEnd = [&](int r) {
    int end = -1;
    for (int m : members[r])
      end = std::max(end, last[m]);
    return end;
  };
  auto inArena = [&](int id) { return !plan.buffers[id].isPersistent(); };

  for (int i = 0; i < steps; ++i) {
    const Step &s = plan.steps[i];
    if (s.kernel == "check_finite_and_unscale") {
      // Gradient k is unscaled in place when it is an f32 temporary that
      // dies here: the whole gradient list is live at this step.
      for (size_t k = 0; k + 1 < s.outputs.size(); ++k) {
        int in = s.inputs[k], out = s.outputs[k];
        const Buffer &ib = plan.buffers[in], &ob = plan.buffers[out];
        if (ib.kind == BufferKind::Temp && ib.dtype == ob.dtype && ib.bytes == ob.bytes &&
            storageEnd(root[in]) == i * stride + (int)k)
          join(out, in);
      }
      continue;
    }
    if (s.outputs.size() != 1)
      continue;
    int out = s.outputs[0];
    const Buffer &ob = plan.buffers[out];
    int at = i * stride;
    if (aliasKernels().count(s.kernel) && s.inputs.size() == 1 && inArena(s.inputs[0]) &&
        plan.buffers[s.inputs[0]].bytes == ob.bytes) {
      join(out, s.inputs[0]);
      continue;
    }
    if (!inPlaceKernels().count(s.kernel))
      continue;
    for (int in : s.inputs) {
      const Buffer &ib = plan.buffers[in];
      if (ib.kind != BufferKind::Temp || ib.dtype != ob.dtype || ib.bytes != ob.bytes ||
          storageEnd(root[in]) != at)
        continue;
      join(out, in);
      break;
    }
  }

  // Persistent state, one buffer after another.
  int64_t persistent = 0;
  for (Buffer &b : plan.buffers)
    if (b.isPersistent()) {
      b.offset = persistent;
      persistent = alignUp(persistent + b.bytes);
    }
  plan.persistentBytes = persistent;

  // Arena storages.
  std::vector<Storage> storages(n);
  int64_t unshared = 0;
  for (int id = 0; id < n; ++id) {
    if (!inArena(id))
      continue;
    unshared += alignUp(plan.buffers[id].bytes);
    Storage &s = storages[root[id]];
    s.bytes = std::max(s.bytes, plan.buffers[id].bytes);
    s.start = std::min(s.start, def[id] == INT_MAX ? -1 : def[id]);
    s.end = std::max({s.end, last[id], def[id] == INT_MAX ? -1 : def[id]});
  }
  std::vector<int> roots;
  for (int id = 0; id < n; ++id)
    if (inArena(id) && root[id] == id)
      roots.push_back(id);
  // Greedy placement in a given order, each storage at the lowest offset
  // (first fit) or in the smallest gap (best fit) that no placed storage
  // with an overlapping live range uses; returns the arena size.
  auto place = [&](const std::vector<int> &order, bool bestFit) {
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
        offset = std::max(offset, alignUp(p->offset + p->bytes));
      }
      s.offset = best >= 0 ? best : offset;
      arena = std::max(arena, alignUp(s.offset + s.bytes));
      placed.push_back(id);
    }
    return arena;
  };
  // The live bytes over the step and, per storage, the most bytes live at
  // once during its life: storages live at the peak are placed first.
  std::map<int, int64_t> delta;
  for (int r : roots) {
    delta[storages[r].start] += storages[r].bytes;
    delta[storages[r].end + 1] -= storages[r].bytes;
  }
  std::vector<std::pair<int, int64_t>> live; // (position, bytes from there)
  int64_t current = 0;
  plan.liveBytes = 0;
  for (auto [at, d] : delta) {
    live.push_back({at, current += d});
    plan.liveBytes = std::max(plan.liveBytes, current);
  }
  auto pressure = [&](const Storage &s) {
    auto it = std::upper_bound(live.begin(), live.end(), std::make_pair(s.start, INT64_MAX));
    int64_t most = it == live.begin() ? 0 : std::prev(it)->second;
    for (; it != live.end() && it->first <= s.end; ++it)
      most = std::max(most, it->second);
    return most;
  };
  std::vector<int64_t> pressureOf(n, 0);
  for (int r : roots)
    pressureOf[r] = pressure(storages[r]);
  // Orders: largest first; longest-lived first; most pressure first (each
  // then largest), each first fit and best fit. The smallest arena wins.
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
      if (int64_t size = place(orders[o], bestFit); size < arena) {
        arena = size;
        bestWay = {o, bestFit};
      }
  place(orders[bestWay.first], bestWay.second); // keep the winner's offsets
  for (int id = 0; id < n; ++id)
    if (inArena(id))
      plan.buffers[id].offset = storages[root[id]].offset;
  plan.arenaBytes = arena;
  plan.unsharedBytes = unshared;
}

} // namespace ampc::rt
