// Casts folded into the kernels next to them (docs/performance.md,
// "Fusions"): same bits, fewer steps and no f32 copies of f16 tensors. The
// plan's cast folding; the graph's own cast cleanup is
// passes/CastCleanupPass.cpp.
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
#include <algorithm>

#include "compiler/plan/PlanPass.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::plan {
namespace {

bool isLow(rt::DType d) { return d == rt::DType::F16 || d == rt::DType::BF16; }

bool mixedFloat(const rt::Step &s) {
  const rt::KernelTraits *t = &rt::traitsOf(s.kernel);
  return t && t->has(rt::kMixedFloat);
}

/// Whether `s` is a cast from f16/bf16 to f32 (`widening`) or from f32 to
/// f16/bf16, reading its source as it is.
bool castBetween(const rt::Plan &plan, const rt::Step &s, bool widening) {
  if (s.kernel != rt::Kernel::Cast || s.inputs.size() != 1 || s.outputs.size() != 1 ||
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
  const rt::KernelTraits *t = &rt::traitsOf(s.kernel);
  return t && t->has(rt::kRoundedCopy) && !s.outputs.empty() && s.outputs[0] == x &&
         t->outputs.allows(s.outputs.size());
}

/// Widening: the readers of y read x instead.
bool foldIntoReaders(PlanIndex &index, int at) {
  const rt::Plan &plan = index.plan();
  int x = index.step(at).inputs[0], y = index.step(at).outputs[0];
  std::vector<int> readers = index.readers(y);
  if (!castBetween(plan, index.step(at), true) || index.kept(y) || readers.empty() ||
      !std::all_of(
          readers.begin(), readers.end(),
          [&](int r) { return mixedFloat(index.step(r)) && readsAsItIs(index.step(r), y); }) ||
      index.writtenBetween({x}, at, readers.back()))
    return false;
  for (int r : readers) {
    std::vector<int> &inputs = index.edit(r).inputs;
    std::replace(inputs.begin(), inputs.end(), y, x);
  }
  return true;
}

/// Narrowing: the step that wrote y writes z instead, or as well.
bool foldIntoWriter(PlanIndex &index, int at) {
  const rt::Plan &plan = index.plan();
  int y = index.step(at).inputs[0], z = index.step(at).outputs[0], w = index.writer(y);
  if (!castBetween(plan, index.step(at), false) || w < 0)
    return false;
  if (!index.kept(y) && index.readers(y) == std::vector<int>{at} && mixedFloat(index.step(w))) {
    std::vector<int> &outputs = index.edit(w).outputs;
    std::replace(outputs.begin(), outputs.end(), y, z);
    return true;
  }
  if (keepsRoundedCopy(index.step(w), y) && !index.writtenBetween({y}, w, at)) {
    index.edit(w).outputs.push_back(z);
    return true;
  }
  return false;
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i)
    if (index.step(i).kernel == rt::Kernel::Cast && (foldIntoReaders(index, i) || foldIntoWriter(index, i)))
      index.erase(i);
}

} // namespace

const PlanPass castFolding = {
    "cast-folding", "casts next to kernels that read any float dtype", true, true, unprobed, run};

} // namespace ampc::plan
