// The attention's log-sum-exp, kept from the forward (docs/runtime.md,
// "Attention"): FlashAttention-2's backward reads each query row's
// log-sum-exp of its scores, which the forward has at its end, instead of
// computing it again from q and k (one pass over the keys of every row).
//
// Algorithm: an `attention_backward` B with five operands (q, k, v, y, dy)
// whose y is written by an `attention` A of the same q, k and v, attributes
// and input rounding, with no step between them writing q or k in place:
// A gets a second result, `<y>.lse` (f32 [batch, seq_q, heads]), and B
// reads it as its sixth operand. The forward computes each row's sum in the
// order the backward did, so the gradients are the same bits (on the CPU).
#include <algorithm>

#include "compiler/plan/PlanPass.h"

namespace ampc::plan {
namespace {

bool sameAttention(const rt::Step &forward, const rt::Step &backward) {
  for (const char *a : {"causal", "scale", "round_inputs"})
    if (forward.attrs.value(a, rt::Json()) != backward.attrs.value(a, rt::Json()))
      return false;
  return std::equal(forward.inputs.begin(), forward.inputs.end(), backward.inputs.begin());
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &backward = index.step(i);
    if (backward.kernel != rt::Kernel::AttentionBackward || backward.inputs.size() != 5)
      continue;
    int f = index.writer(backward.inputs[3]);
    if (f < 0 || index.step(f).kernel != rt::Kernel::Attention ||
        index.step(f).outputs[0] != backward.inputs[3] || !sameAttention(index.step(f), backward) ||
        index.writtenBetween({backward.inputs[0], backward.inputs[1]}, f, i))
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
    index.edit(i).inputs.push_back(lse);
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
