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
#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

bool plainScale(const rt::Step &s) {
  return s.kernel == rt::Kernel::Scale && s.inputs.size() == 1 && s.outputs.size() == 1 &&
         !s.attrs.contains("round_inputs");
}

bool isSoftmax(const rt::Step &s) {
  return (s.kernel == rt::Kernel::Softmax || s.kernel == rt::Kernel::LogSoftmax) &&
         !s.attrs.contains("round_inputs") && !s.attrs.contains("input_scale");
}

/// Before: folds the scale at `at` into its softmax readers; whether it did.
bool foldBefore(PlanIndex &index, int at) {
  const rt::Step &scale = index.step(at);
  int x = scale.inputs[0], y = scale.outputs[0];
  std::vector<int> readers = index.readers(y);
  if (readers.empty() || !rt::isComputeFloat(index.buffer(y).dtype) || index.kept(y) ||
      index.writtenBetween({x}, at, readers.back()))
    return false;
  for (int k : readers) {
    const rt::Step &s = index.step(k);
    if (!isSoftmax(s) || s.inputs.size() != 1 || s.inputs[0] != y)
      return false;
  }
  for (int k : readers) {
    rt::Step &s = index.edit(k);
    s.inputs[0] = x;
    s.attrs["input_scale"] = scale.attrs.value("scale", 1.0);
    s.attrs["input_bias"] = scale.attrs.value("bias", 0.0);
    s.attrs["input_round"] = roundingOf(index.buffer(y).dtype);
  }
  return true;
}

/// After: folds the scale at `at` into the softmax_backward whose result it
/// alone reads; whether it did.
bool foldAfter(PlanIndex &index, int at) {
  const rt::Step &scale = index.step(at);
  int g = scale.inputs[0], b = index.writer(g);
  if (b < 0 || index.soleReader(g) != at || !rt::isComputeFloat(index.buffer(g).dtype))
    return false;
  const rt::Step &backward = index.step(b);
  if (backward.kernel != rt::Kernel::SoftmaxBackward || backward.outputs.size() != 1 ||
      backward.attrs.contains("output_scale"))
    return false;
  rt::Step &fused = index.edit(b);
  fused.attrs["output_scale"] = scale.attrs.value("scale", 1.0);
  fused.attrs["output_bias"] = scale.attrs.value("bias", 0.0);
  fused.attrs["output_round"] = roundingOf(index.buffer(g).dtype);
  fused.outputs = scale.outputs;
  return true;
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i)
    if (plainScale(index.step(i)) && (foldBefore(index, i) || foldAfter(index, i)))
      index.erase(i);
}

} // namespace

const PlanPass softmaxScales = {"softmax-scales",
                                "scales before softmaxes and after their backward",
                                true,
                                true,
                                unprobedChainTarget,
                                run};

} // namespace ampc::plan
