// The attention's log-sum-exp, kept from the forward (docs/runtime.md,
// "Attention"): FlashAttention-2's backward reads each query row's
// log-sum-exp of its scores, which the forward has at its end, instead of
// computing it again from q and k (one pass over the keys of every row).
//
// Algorithm: an `attention_backward` B (q, k, v, y, dy[, bias]) whose y is
// written by an `attention` A of the same q, k, v and bias, attributes and
// input rounding, with no step between them writing q, k or the bias in
// place: A gets a second result, `<y>.lse` (f32 [batch, seq_q, heads]), and
// B reads it after its other operands (attribute `saved_lse`). The forward computes each row's sum in the
// order the backward did, so the gradients are the same bits (on the CPU).
#include <algorithm>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

/// The operands that decide the scores: q, k and the bias, if any.
std::vector<int> scoreOperands(const rt::Step &s, size_t bias) {
  std::vector<int> ids = {s.inputs[0], s.inputs[1]};
  if (s.inputs.size() > bias)
    ids.push_back(s.inputs[bias]);
  return ids;
}

bool sameAttention(const rt::Step &forward, const rt::Step &backward) {
  for (const char *a : {"causal", "scale", "round_inputs"})
    if (forward.attrs.value(a, rt::Json()) != backward.attrs.value(a, rt::Json()))
      return false;
  return scoreOperands(forward, 3) == scoreOperands(backward, 5) &&
         forward.inputs[2] == backward.inputs[2];
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &backward = index.step(i);
    if (backward.kernel != rt::Kernel::AttentionBackward || backward.inputs.size() > 6 ||
        backward.attrs.value("saved_lse", false))
      continue;
    int f = index.writer(backward.inputs[3]);
    if (f < 0 || index.step(f).kernel != rt::Kernel::Attention ||
        index.step(f).outputs[0] != backward.inputs[3] || !sameAttention(index.step(f), backward) ||
        index.writtenBetween(scoreOperands(backward, 5), f, i))
      continue;
    int lse;
    if (index.step(f).outputs.size() > 1) {
      lse = index.step(f).outputs[1];
    } else {
      const std::vector<int64_t> &q = index.buffer(backward.inputs[0]).shape;
      lse = index.addBuffer(index.buffer(backward.inputs[3]).name + ".lse", rt::DType::F32,
                            {q[0], q[1], q[2]});
      index.edit(f).outputs.push_back(lse);
    }
    rt::Step &reader = index.edit(i);
    reader.inputs.push_back(lse);
    reader.attrs["saved_lse"] = true;
  }
}

} // namespace

const PlanPass attentionLse = {"attention-lse",
                               "attention's backward computes each row's log-sum-exp again "
                               "instead of reading the forward's",
                               true,
                               true,
                               always,
                               run};

} // namespace ampc::plan
