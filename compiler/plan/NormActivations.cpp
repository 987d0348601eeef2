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
#include <algorithm>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

/// A step of `kernel` with `inputs` operands, one result and no fused casts.
bool plainStep(const rt::Step &s, rt::Kernel kernel, size_t inputs) {
  return s.kernel == kernel && s.inputs.size() == inputs && s.outputs.size() == 1 &&
         !s.attrs.contains("round_inputs");
}

/// Whether buffers a and b have one shape and one dtype.
bool alike(const PlanIndex &index, int a, int b) {
  const rt::Buffer &x = index.buffer(a), &y = index.buffer(b);
  return x.shape == y.shape && x.dtype == y.dtype;
}

/// Whether a step strictly between `from` and `to` reads one of `ids`.
bool readBetween(const PlanIndex &index, const std::vector<int> &ids, int from, int to) {
  for (int j = from + 1; j < to; ++j)
    for (int id : ids)
      if (!index.erased(j) &&
          std::count(index.step(j).inputs.begin(), index.step(j).inputs.end(), id))
        return true;
  return false;
}

/// Forward: folds the relu (and the add before it) after the batch norm at
/// `at` into it, run where the relu ran; whether it did.
bool fuseForward(PlanIndex &index, int at) {
  const rt::Step &bn = index.step(at);
  if (!plainStep(bn, rt::Kernel::BatchNorm, 5) || bn.attrs.contains(rt::attr::kActivation))
    return false;
  int y = bn.outputs[0];
  int next = index.soleReader(y), residual = -1, add = -1;
  if (next < 0 || !rt::isComputeFloat(index.buffer(y).dtype))
    return false;
  const rt::Step &sum = index.step(next);
  if (plainStep(sum, rt::Kernel::Add, 2) && alike(index, sum.outputs[0], y)) {
    residual = sum.inputs[0] == y ? sum.inputs[1] : sum.inputs[0];
    if (residual == y || !alike(index, residual, y))
      return false;
    add = next;
    next = index.soleReader(sum.outputs[0]);
    if (next < 0)
      return false;
  }
  const rt::Step &relu = index.step(next);
  if (!plainStep(relu, rt::Kernel::Relu, 1) || !alike(index, relu.outputs[0], y) ||
      index.writtenBetween(bn.inputs, at, next) ||
      readBetween(index, {bn.inputs[3], bn.inputs[4]}, at, next))
    return false;
  rt::Step &fused = index.edit(at);
  fused.attrs[rt::attr::kActivation] = rt::activationName(rt::Activation::Relu);
  if (residual >= 0)
    fused.inputs.push_back(residual);
  fused.outputs = relu.outputs;
  if (add >= 0)
    index.erase(add);
  index.erase(next);
  index.move(at, next);
  return true;
}

/// Backward: folds the relu backward at `at` into the batch_norm_backward
/// that alone reads its result; whether it did.
bool fuseBackward(PlanIndex &index, int at) {
  const rt::Step &ub = index.step(at);
  if (!plainStep(ub, rt::Kernel::UnaryBackward, 3) ||
      rt::unaryCallOf(ub, rt::StepAttrs(ub)).fn != num::UnaryFn::Relu)
    return false;
  int dy = ub.outputs[0], z = ub.inputs[0], dz = ub.inputs[2];
  int b = index.soleReader(dy);
  if (b < 0 || index.buffer(dy).dtype != index.buffer(dz).dtype)
    return false;
  const rt::Step &bnb = index.step(b);
  if (bnb.kernel != rt::Kernel::BatchNormBackward || bnb.inputs.size() != 3 ||
      bnb.attrs.contains("round_inputs") || bnb.attrs.contains(rt::attr::kActivation) ||
      bnb.inputs[1] != dy || bnb.inputs[0] == dy || bnb.inputs[2] == dy ||
      index.writtenBetween({dz, z}, at, b))
    return false;
  rt::Step &fused = index.edit(b);
  fused.inputs[1] = dz;
  fused.inputs.push_back(z);
  fused.attrs[rt::attr::kActivation] = rt::activationName(rt::Activation::Relu);
  return true;
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    if (index.erased(i))
      continue;
    if (!fuseForward(index, i) && fuseBackward(index, i))
      index.erase(i);
  }
}

} // namespace

const PlanPass normActivations = {"norm-activations",
                                  "relus and residual adds after batch norms",
                                  true,
                                  true,
                                  unprobedChainTarget,
                                  run};

} // namespace ampc::plan
