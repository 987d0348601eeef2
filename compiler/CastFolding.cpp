// Cast folding in the lowering (docs/performance.md, "Fusions").
//
// Algorithm: kernels with the trait kMixedFloat (elementwise math, norms,
// softmax, reductions and their backward) read each float operand at its
// own dtype and write each float result at its own, computing in f32 and
// rounding each result once. So, one cast step at a time, in plan order:
//  - a widening cast x (f16/bf16) -> y (f32) whose every reader is such a
//    kernel, reading y as it is (no `round_inputs` entry), folds into its
//    readers: they read x instead. Widening is exact, so they see the same
//    f32 values. No step between the cast and its last reader may write x
//    in place (an optimizer update of an f16 param).
//  - a narrowing cast y (f32) -> z (f16/bf16) whose input only it reads and
//    a kMixedFloat step wrote folds into that step: it writes z, rounding
//    its f32 result once, as the cast did.
//  - a narrowing cast of result 0 of a kRoundedCopy step (layer_norm, its
//    backward, softmax) that other steps also read in f32 folds into that
//    step as one more output: it writes y and z in the same pass.
// Buffers the plan returns or reports as its loss are never folded away.
// Both folds give the unfused plan's bits; the folded plan has fewer steps
// and no f32 copy of an f16 tensor (half the bytes moved for those values).
#include "compiler/CastFolding.h"

#include <algorithm>

#include "compiler/PlanSteps.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/StepAttrs.h"

namespace ampc {
namespace {

bool isLow(rt::DType d) { return d == rt::DType::F16 || d == rt::DType::BF16; }

bool mixedFloat(const rt::Step &s) {
  const rt::KernelTraits *t = rt::findKernelTraits(s.kernel);
  return t && t->has(rt::kMixedFloat);
}

/// Whether `s` is a cast from f16/bf16 to f32 (`widening`) or from f32 to
/// f16/bf16, reading its source as it is.
bool castBetween(const rt::Plan &plan, const rt::Step &s, bool widening) {
  if (s.kernel != "cast" || s.inputs.size() != 1 || s.outputs.size() != 1 ||
      s.attrs.contains("round_inputs"))
    return false;
  rt::DType from = plan.buffers[s.inputs[0]].dtype, to = plan.buffers[s.outputs[0]].dtype;
  return widening ? isLow(from) && to == rt::DType::F32 : from == rt::DType::F32 && isLow(to);
}

/// Whether `reader` reads buffer `y` only where it takes y as it is.
bool readsAsItIs(const rt::Step &reader, int y) {
  rt::StepAttrs attrs(reader);
  for (size_t i = 0; i < reader.inputs.size(); ++i)
    if (reader.inputs[i] == y && attrs.roundedInput(i) != rt::DType::F32)
      return false;
  return true;
}

/// Whether `s` can also write its result `x` rounded, as one more output:
/// x is result 0 of a kRoundedCopy kernel that carries no copy yet.
bool keepsRoundedCopy(const rt::Step &s, int x) {
  const rt::KernelTraits *t = rt::findKernelTraits(s.kernel);
  return t && t->has(rt::kRoundedCopy) && !s.outputs.empty() && s.outputs[0] == x &&
         t->outputs.allows(s.outputs.size());
}

} // namespace

void foldCasts(rt::Plan &plan) {
  std::vector<std::vector<int>> readers = readersOf(plan);
  std::vector<int> writer = writersOf(plan);
  std::vector<bool> kept(plan.buffers.size(), false), erased(plan.steps.size(), false);
  for (int id : plan.outputs)
    kept[id] = true;
  if (plan.loss >= 0)
    kept[plan.loss] = true;
  // Only casts are erased, each when the loop reaches it.
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    rt::Step &cast = plan.steps[i];
    if (cast.kernel != "cast")
      continue;
    int x = cast.inputs[0], y = cast.outputs[0];
    if (castBetween(plan, cast, true) && !kept[y] && !readers[y].empty() &&
        std::all_of(
            readers[y].begin(), readers[y].end(),
            [&](int r) { return mixedFloat(plan.steps[r]) && readsAsItIs(plan.steps[r], y); }) &&
        !writtenBetween(plan, {x}, i, readers[y].back())) {
      for (int r : readers[y]) {
        std::replace(plan.steps[r].inputs.begin(), plan.steps[r].inputs.end(), y, x);
        readers[x].push_back(r);
      }
      std::vector<int> &rx = readers[x];
      rx.erase(std::remove(rx.begin(), rx.end(), (int)i), rx.end());
      std::sort(rx.begin(), rx.end());
      rx.erase(std::unique(rx.begin(), rx.end()), rx.end());
      readers[y].clear();
      erased[i] = true;
    } else if (castBetween(plan, cast, false) && !kept[x] &&
               readers[x] == std::vector<int>{(int)i} && writer[x] >= 0 &&
               mixedFloat(plan.steps[writer[x]])) {
      rt::Step &producer = plan.steps[writer[x]];
      std::replace(producer.outputs.begin(), producer.outputs.end(), x, y);
      writer[y] = writer[x];
      readers[x].clear();
      erased[i] = true;
    } else if (castBetween(plan, cast, false) && writer[x] >= 0 &&
               keepsRoundedCopy(plan.steps[writer[x]], x) &&
               !writtenBetween(plan, {x}, writer[x], i)) {
      plan.steps[writer[x]].outputs.push_back(y);
      writer[y] = writer[x];
      std::vector<int> &rx = readers[x];
      rx.erase(std::remove(rx.begin(), rx.end(), (int)i), rx.end());
      erased[i] = true;
    }
  }
  eraseSteps(plan, erased);
}

} // namespace ampc
