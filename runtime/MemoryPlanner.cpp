// Memory planning (planMemory in runtime/Plan.h).
//
// Algorithm: compute each buffer's live range [definition, last use] over the
// step order. Inputs live through the whole run (a driver may set one, such
// as the learning rate, once for many runs); graph outputs live to the end.
// Group buffers into storages: the output of reshape/flatten/identity joins
// its input's storage, and an elementwise step's output (or an unscaled
// gradient of check_finite_and_unscale) joins the storage of a same-sized,
// same-dtype input whose storage dies at that step (in place).
// Persistent buffers (params, consts) are laid out one after another. The
// arena storages are placed greedily by decreasing size, each at the lowest
// aligned offset that no placed storage with an overlapping live range uses.
#include <algorithm>
#include <climits>
#include <numeric>
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
      "square", "pow"};
  return k;
}

struct Storage {
  int64_t bytes = 0, offset = 0;
  int start = INT_MAX, end = -1;
};

} // namespace

void planMemory(Plan &plan) {
  int n = plan.buffers.size(), steps = plan.steps.size();
  std::vector<int> def(n, INT_MAX), last(n, -1);
  for (int id : plan.inputs) {
    def[id] = -1;
    last[id] = steps;
  }
  for (int i = 0; i < steps; ++i) {
    for (int out : plan.steps[i].outputs)
      def[out] = std::min(def[out], i);
    for (int in : plan.steps[i].inputs)
      last[in] = std::max(last[in], i);
  }
  for (int id : plan.outputs)
    last[id] = std::max(last[id], steps);
  if (plan.loss >= 0)
    last[plan.loss] = steps;

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
            storageEnd(root[in]) == i)
          join(out, in);
      }
      continue;
    }
    if (s.outputs.size() != 1)
      continue;
    int out = s.outputs[0];
    const Buffer &ob = plan.buffers[out];
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
          storageEnd(root[in]) != i)
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
  std::vector<int> order;
  for (int id = 0; id < n; ++id)
    if (inArena(id) && root[id] == id)
      order.push_back(id);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return storages[a].bytes > storages[b].bytes;
  });
  std::vector<int> placed;
  int64_t arena = 0;
  for (int id : order) {
    Storage &s = storages[id];
    std::vector<const Storage *> overlapping;
    for (int p : placed)
      if (storages[p].start <= s.end && s.start <= storages[p].end)
        overlapping.push_back(&storages[p]);
    std::sort(overlapping.begin(), overlapping.end(),
              [](const Storage *a, const Storage *b) { return a->offset < b->offset; });
    int64_t offset = 0;
    for (const Storage *p : overlapping) {
      if (offset + s.bytes <= p->offset)
        break;
      offset = std::max(offset, alignUp(p->offset + p->bytes));
    }
    s.offset = offset;
    arena = std::max(arena, alignUp(offset + s.bytes));
    placed.push_back(id);
  }
  for (int id = 0; id < n; ++id)
    if (inArena(id))
      plan.buffers[id].offset = storages[root[id]].offset;
  plan.arenaBytes = arena;
  plan.unsharedBytes = unshared;
}

} // namespace ampc::rt
