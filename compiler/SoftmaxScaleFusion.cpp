// Softmax scales (docs/performance.md, "Fusions"; the attributes:
// docs/runtime.md, "Softmax scales").
//
// Algorithm, for targets with `elementwise_chains`:
// - Before: a `scale` step (y = x * scale + bias) whose result only
//   `softmax` or `log_softmax` steps read, each as its operand, and which
//   the plan does not return, folds into every one of them: each reads x
//   and applies the scale as it reads (`input_scale`, `input_bias`, and
//   `input_round`: y's dtype, to which the scale step rounded). Attention's
//   1/sqrt(d) before the softmax, and the backward's recomputed softmax,
//   which reads the same scaled scores.
// - After: a `softmax_backward` whose result only a `scale` step reads takes
//   that scale (`output_scale`, `output_bias`, and `output_round`: its own
//   result's dtype) and writes the scale's result: attention's gradient of
//   the scores.
// No step in between may write x in place. Each fused kernel rounds where
// the two steps rounded: the same bits.
#include "compiler/SoftmaxScaleFusion.h"

#include <algorithm>

#include "compiler/PlanSteps.h"

namespace ampc {
namespace {

bool plainScale(const rt::Step &s) {
  return s.kernel == "scale" && s.inputs.size() == 1 && s.outputs.size() == 1 &&
         !s.attrs.contains("round_inputs");
}

bool isSoftmax(const rt::Step &s) {
  return (s.kernel == "softmax" || s.kernel == "log_softmax") &&
         !s.attrs.contains("round_inputs") && !s.attrs.contains("input_scale");
}

/// Before: folds the scale at `at` into its softmax readers; whether it did.
bool foldBefore(rt::Plan &plan, const std::vector<std::vector<int>> &readers, int at) {
  const rt::Step &scale = plan.steps[at];
  int x = scale.inputs[0], y = scale.outputs[0];
  const std::vector<int> &r = readers[y];
  if (r.empty() || !rt::isComputeFloat(plan.buffers[y].dtype) ||
      std::count(plan.outputs.begin(), plan.outputs.end(), y) || plan.loss == y ||
      writtenBetween(plan, {x}, at, r.back()))
    return false;
  for (int k : r) {
    const rt::Step &s = plan.steps[k];
    if (!isSoftmax(s) || s.inputs.size() != 1 || s.inputs[0] != y)
      return false;
  }
  for (int k : r) {
    rt::Step &s = plan.steps[k];
    s.inputs[0] = x;
    s.attrs["input_scale"] = scale.attrs.value("scale", 1.0);
    s.attrs["input_bias"] = scale.attrs.value("bias", 0.0);
    s.attrs["input_round"] = roundingOf(plan.buffers[y].dtype);
  }
  return true;
}

/// After: folds the scale at `at` into the softmax_backward whose result it
/// alone reads; whether it did.
bool foldAfter(rt::Plan &plan, const std::vector<int> &writer, const std::vector<int> &reader,
               int at) {
  const rt::Step &scale = plan.steps[at];
  int g = scale.inputs[0], b = writer[g];
  if (b < 0 || reader[g] != at || !rt::isComputeFloat(plan.buffers[g].dtype))
    return false;
  rt::Step &backward = plan.steps[b];
  if (backward.kernel != "softmax_backward" || backward.outputs.size() != 1 ||
      backward.attrs.contains("output_scale"))
    return false;
  backward.attrs["output_scale"] = scale.attrs.value("scale", 1.0);
  backward.attrs["output_bias"] = scale.attrs.value("bias", 0.0);
  backward.attrs["output_round"] = roundingOf(plan.buffers[g].dtype);
  backward.outputs = scale.outputs;
  return true;
}

} // namespace

void fuseSoftmaxScales(rt::Plan &plan) {
  std::vector<std::vector<int>> readers = readersOf(plan);
  std::vector<int> reader = soleReaders(plan), writer = writersOf(plan);
  std::vector<bool> erased(plan.steps.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (plainScale(plan.steps[i]))
      erased[i] = foldBefore(plan, readers, (int)i) || foldAfter(plan, writer, reader, (int)i);
  eraseSteps(plan, erased);
}

} // namespace ampc
