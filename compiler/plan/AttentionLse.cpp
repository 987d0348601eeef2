// The attention's log-sum-exp, kept from the forward (docs/runtime.md,
// "Attention"): FlashAttention-2's backward reads each query row's
// log-sum-exp of its scores, which the forward has at its end, instead of
// computing it again from q and k (one pass over the keys of every row).
//
// Algorithm: an `attention_backward` B (q, k, v, y, dy[, bias]) whose y is
// written by an `attention` A of the same q, k and bias (the same buffers,
// or casts of one source to one dtype, as recompute makes), attributes and
// input rounding, with no step between them writing those in place: A gets a second result, `<y>.lse` (f32 [batch, seq_q, heads]), and
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

/// What buffer `id` holds, up to a cast: the cast's source and dtype. The
/// backward may read a cast recomputed from the source the forward's cast
/// read (recompute's `.recast`): the same values in another buffer.
std::pair<int, rt::Json> valueOf(PlanIndex &index, int id) {
  int w = index.writer(id);
  if (w >= 0 && index.step(w).kernel == rt::Kernel::Cast)
    return {index.step(w).inputs[0], index.step(w).attrs.value("to", rt::Json())};
  return {id, rt::Json()};
}

bool sameAttention(PlanIndex &index, const rt::Step &forward, const rt::Step &backward) {
  for (const char *a : {"causal", "scale", "round_inputs"})
    if (forward.attrs.value(a, rt::Json()) != backward.attrs.value(a, rt::Json()))
      return false;
  std::vector<int> f = scoreOperands(forward, 3), b = scoreOperands(backward, 5);
  if (f.size() != b.size())
    return false;
  for (size_t k = 0; k < f.size(); ++k)
    if (valueOf(index, f[k]) != valueOf(index, b[k]))
      return false;
  return true;
}

/// The buffers whose writing between the two steps would change the scores:
/// the backward's score operands and what they were cast from.
std::vector<int> scoreSources(PlanIndex &index, const rt::Step &backward) {
  std::vector<int> ids = scoreOperands(backward, 5);
  for (int id : scoreOperands(backward, 5))
    ids.push_back(valueOf(index, id).first);
  return ids;
}

void run(PlanIndex &index, const PassContext &) {
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &backward = index.step(i);
    if (backward.kernel != rt::Kernel::AttentionBackward || backward.inputs.size() > 6 ||
        backward.attrs.value("saved_lse", false))
      continue;
    int f = index.writer(backward.inputs[3]);
    if (f < 0 || index.step(f).kernel != rt::Kernel::Attention ||
        index.step(f).outputs[0] != backward.inputs[3] ||
        !sameAttention(index, index.step(f), backward) ||
        index.writtenBetween(scoreSources(index, backward), f, i))
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
