// Softmax backward from logits (docs/performance.md, "Fusions"; the
// kernel: docs/runtime.md, "Softmax backward from logits").
//
// Algorithm, for targets with `elementwise_chains`: a `softmax_backward`
// (not of a log_softmax) reads y, the f32 result of a `softmax` S along the
// last axis, and no other step reads y nor does the plan return it (the
// backward's recomputed attention probabilities: S writes y and its f16
// copy, which the gradient of V reads). Then the backward reads S's operand
// x instead, with S's folded input scale (`input_*`), as the kernel
// softmax_logits_backward, which recomputes each probability as S computed it; S keeps its rounded copy as
// its only result, or goes if it has none. No step between S and the
// backward may write x in place. The probabilities are the same bits, so
// the gradients are too; per BERT-base layer, the 25 MB of f32
// probabilities are neither written nor read.
#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

/// The step's axis, counted from the front, for a result of `rank`.
int64_t lastAxisOf(const rt::Step &s, size_t rank) {
  int64_t axis = s.attrs.value("axis", -1);
  return axis < 0 ? axis + (int64_t)rank : axis;
}

/// Whether the softmax_backward at `at` can read the logits of the softmax
/// at `s` that wrote its probabilities.
bool fusable(PlanIndex &index, int s, int at) {
  const rt::Step &softmax = index.step(s), &backward = index.step(at);
  int y = backward.inputs[0];
  size_t rank = index.buffer(y).shape.size();
  return softmax.kernel == rt::Kernel::Softmax && softmax.outputs[0] == y && index.soleReader(y) == at &&
         !softmax.attrs.contains("round_inputs") && !backward.attrs.contains("round_inputs") &&
         !backward.attrs.value("log", false) &&
         rank > 0 && lastAxisOf(softmax, rank) + 1 == (int64_t)rank &&
         lastAxisOf(backward, rank) + 1 == (int64_t)rank &&
         !index.writtenBetween({softmax.inputs[0]}, s, at);
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &backward = index.step(i);
    if (backward.kernel != rt::Kernel::SoftmaxBackward || backward.inputs.size() != 2)
      continue;
    int s = index.writer(backward.inputs[0]);
    if (s < 0 || !fusable(index, s, i))
      continue;
    const rt::Step &softmax = index.step(s);
    rt::Step &fused = index.edit(i);
    fused.inputs[0] = softmax.inputs[0];
    fused.kernel = rt::Kernel::SoftmaxLogitsBackward;
    for (const char *name : {"input_scale", "input_bias", "input_round"})
      if (softmax.attrs.contains(name))
        fused.attrs[name] = softmax.attrs[name];
    if (softmax.outputs.size() > 1) // its rounded copy is its result now
      index.edit(s).outputs = {softmax.outputs[1]};
    else
      index.erase(s);
  }
}

} // namespace

const PlanPass softmaxLogits = {"softmax-logits",
                                "a softmax's backward reads its probabilities, not the "
                                "softmax's operand",
                                true,
                                true,
                                unprobedChainTarget,
                                run};

} // namespace ampc::plan
