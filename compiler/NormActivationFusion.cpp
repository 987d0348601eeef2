// Batch norm activations (docs/performance.md, "Fusions").
//
// Algorithm, for targets with `elementwise_chains`, before the chains form:
// - Forward: a `batch_norm` step whose result y only a `relu` reads, or only
//   an `add` of y and a residual r whose sum only a `relu` reads, becomes
//   one batch_norm step with `activation` relu (r its sixth input) that
//   writes the relu's result, run where the relu ran. y, r, the sum and the
//   relu's result share one shape and one dtype (f32, f16 or bf16). No step
//   in between may write the norm's operands in place or read its running
//   statistics, which the norm moves.
// - Backward: a relu's `unary_backward` (the gradient dz at the relu's
//   result z) whose result only a `batch_norm_backward` reads, as its dy,
//   joins that step: `activation` relu, dz in dy's place and z as a fourth
//   input. dz and the result share a dtype; no step in between may write dz
//   or z in place.
// The fused kernels round where the unfused steps rounded: the same bits.
// ResNet's bottlenecks: every batch norm but the shortcut's ends in one.
#include "compiler/NormActivationFusion.h"

#include <algorithm>

#include "compiler/PlanSteps.h"

namespace ampc {
namespace {

/// A step of `kernel` with `inputs` operands, one result and no fused casts.
bool plainStep(const rt::Step &s, const char *kernel, size_t inputs) {
  return s.kernel == kernel && s.inputs.size() == inputs && s.outputs.size() == 1 &&
         !s.attrs.contains("round_inputs");
}

/// Whether buffers a and b have one shape and one dtype.
bool alike(const rt::Plan &plan, int a, int b) {
  const rt::Buffer &x = plan.buffers[a], &y = plan.buffers[b];
  return x.shape == y.shape && x.dtype == y.dtype;
}

/// Whether a step strictly between `from` and `to` reads one of `ids`.
bool readBetween(const rt::Plan &plan, const std::vector<int> &ids, int from, int to) {
  for (int j = from + 1; j < to; ++j)
    for (int id : ids)
      if (std::count(plan.steps[j].inputs.begin(), plan.steps[j].inputs.end(), id))
        return true;
  return false;
}

/// Forward: folds the relu (and the add before it) after the batch norm at
/// `at` into it, run where the relu ran; returns the steps it replaced
/// (none where it did not fuse).
std::vector<int> fuseForward(rt::Plan &plan, const std::vector<int> &reader, int at) {
  const rt::Step &bn = plan.steps[at];
  if (!plainStep(bn, "batch_norm", 5) || bn.attrs.contains("activation"))
    return {};
  int y = bn.outputs[0];
  int next = reader[y], residual = -1;
  if (next < 0 || !rt::isComputeFloat(plan.buffers[y].dtype))
    return {};
  std::vector<int> replaced = {at};
  const rt::Step &add = plan.steps[next];
  if (plainStep(add, "add", 2) && alike(plan, add.outputs[0], y)) {
    residual = add.inputs[0] == y ? add.inputs[1] : add.inputs[0];
    if (residual == y || !alike(plan, residual, y))
      return {};
    replaced.push_back(next);
    next = reader[add.outputs[0]];
    if (next < 0)
      return {};
  }
  const rt::Step &relu = plan.steps[next];
  if (!plainStep(relu, "relu", 1) || !alike(plan, relu.outputs[0], y) ||
      writtenBetween(plan, bn.inputs, at, next) ||
      readBetween(plan, {bn.inputs[3], bn.inputs[4]}, at, next))
    return {};
  rt::Step fused = bn;
  fused.attrs["activation"] = "relu";
  if (residual >= 0)
    fused.inputs.push_back(residual);
  fused.outputs = relu.outputs;
  plan.steps[next] = std::move(fused);
  return replaced;
}

/// Backward: folds the relu backward at `at` into the batch_norm_backward
/// that alone reads its result; whether it did.
bool fuseBackward(rt::Plan &plan, const std::vector<int> &reader, size_t at) {
  const rt::Step &ub = plan.steps[at];
  if (!plainStep(ub, "unary_backward", 3) || ub.attrs.value("fn", std::string()) != "relu")
    return false;
  int dy = ub.outputs[0], z = ub.inputs[0], dz = ub.inputs[2];
  int b = reader[dy];
  if (b < 0 || plan.buffers[dy].dtype != plan.buffers[dz].dtype)
    return false;
  rt::Step &bnb = plan.steps[b];
  if (bnb.kernel != "batch_norm_backward" || bnb.inputs.size() != 3 ||
      bnb.attrs.contains("round_inputs") || bnb.attrs.contains("activation") ||
      bnb.inputs[1] != dy || bnb.inputs[0] == dy || bnb.inputs[2] == dy ||
      writtenBetween(plan, {dz, z}, (int)at, b))
    return false;
  bnb.inputs[1] = dz;
  bnb.inputs.push_back(z);
  bnb.attrs["activation"] = "relu";
  return true;
}

} // namespace

void fuseNormActivations(rt::Plan &plan) {
  std::vector<int> reader = soleReaders(plan);
  std::vector<bool> erased(plan.steps.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    if (erased[i])
      continue;
    std::vector<int> replaced = fuseForward(plan, reader, (int)i);
    for (int j : replaced)
      erased[j] = true;
    if (replaced.empty() && fuseBackward(plan, reader, i))
      erased[i] = true;
  }
  eraseSteps(plan, erased);
}

} // namespace ampc
