// Softmax backward from logits (docs/performance.md, "Fusions"; the
// attribute: docs/runtime.md, "Softmax backward from logits").
//
// Algorithm, for targets with `elementwise_chains`: a `softmax_backward`
// (not of a log_softmax) reads y, the f32 result of a `softmax` S along the
// last axis, and no other step reads y nor does the plan return it (the
// backward's recomputed attention probabilities: S writes y and its f16
// copy, which the gradient of V reads). Then the backward reads S's operand
// x instead, with S's folded input scale (`input_*`) and `from_logits`, and
// recomputes each probability as S computed it; S keeps its rounded copy as
// its only result, or goes if it has none. No step between S and the
// backward may write x in place. The probabilities are the same bits, so
// the gradients are too; per BERT-base layer, the 25 MB of f32
// probabilities are neither written nor read.
#include "compiler/SoftmaxLogitsFusion.h"

#include <algorithm>

#include "compiler/PlanSteps.h"
#include "runtime/core/KernelSignatures.h"

namespace ampc {
namespace {

/// The step's axis, counted from the front, for a result of `rank`.
int64_t lastAxisOf(const rt::Step &s, size_t rank) {
  int64_t axis = s.attrs.value("axis", -1);
  return axis < 0 ? axis + (int64_t)rank : axis;
}

/// Whether the softmax_backward at `at` can read the logits of the softmax
/// that wrote its probabilities; `s` that softmax's position.
bool fusable(const rt::Plan &plan, const std::vector<int> &reader, int s, int at) {
  const rt::Step &softmax = plan.steps[s], &backward = plan.steps[at];
  int y = backward.inputs[0];
  size_t rank = plan.buffers[y].shape.size();
  return softmax.kernel == "softmax" && softmax.outputs[0] == y && reader[y] == at &&
         !softmax.attrs.contains("round_inputs") && !backward.attrs.contains("round_inputs") &&
         !backward.attrs.value("log", false) && !backward.attrs.contains(rt::kFromLogits) &&
         rank > 0 && lastAxisOf(softmax, rank) + 1 == (int64_t)rank &&
         lastAxisOf(backward, rank) + 1 == (int64_t)rank &&
         !writtenBetween(plan, {softmax.inputs[0]}, s, at);
}

} // namespace

void fuseSoftmaxLogits(rt::Plan &plan) {
  std::vector<int> reader = soleReaders(plan), writer = writersOf(plan);
  std::vector<bool> erased(plan.steps.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    rt::Step &backward = plan.steps[i];
    if (backward.kernel != "softmax_backward" || backward.inputs.size() != 2)
      continue;
    int s = writer[backward.inputs[0]];
    if (s < 0 || !fusable(plan, reader, s, (int)i))
      continue;
    rt::Step &softmax = plan.steps[s];
    backward.inputs[0] = softmax.inputs[0];
    backward.attrs[rt::kFromLogits] = true;
    for (const char *name : {"input_scale", "input_bias", "input_round"})
      if (softmax.attrs.contains(name))
        backward.attrs[name] = softmax.attrs[name];
    if (softmax.outputs.size() > 1) // its rounded copy is its result now
      softmax.outputs = {softmax.outputs[1]};
    else
      erased[s] = true;
  }
  eraseSteps(plan, erased);
}

} // namespace ampc
