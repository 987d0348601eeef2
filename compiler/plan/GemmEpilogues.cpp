// GEMM epilogues (docs/performance.md, "Fusions").
//
// Algorithm, for targets with `gemm_epilogues`: a `matmul` step of one GEMM
// (b a matrix, a not transposed, a non-empty sum) whose result only an `add`
// step reads, with a bias vector of the result's columns in the result's
// dtype as the add's other operand, becomes `matmul_bias` (inputs a, b,
// bias; the add's result), run where the add ran (the bias may be made
// after the matmul). If that result in turn is read only by a `relu` or a
// tanh `gelu` step, the activation joins too, and the fused step runs there.
// A tanh GELU also joins when later steps read its input (the backward
// does): the input stays, as the fused step's second result (cuBLASLt's
// GELU_AUX_BIAS). Results the plan returns are never folded away; no step in
// between may write a or b in place. The fused step rounds once where the
// two or three steps rounded after each: results agree within the matmul's
// tolerance.
#include "compiler/plan/PlanPass.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::plan {
namespace {

/// The round_inputs entry of input `i` of `s` ("" when none).
std::string roundedInput(const rt::Step &s, size_t i) {
  rt::DType d = rt::StepAttrs(s).roundedInput(i);
  return d == rt::DType::F32 ? "" : rt::dtypeName(d);
}

/// The bias operand of `add` (an index into its inputs) when its other
/// operand is `y` and the bias is a vector of y's columns in y's dtype (or
/// an f32 one the add reads rounded to it: a fused cast).
int biasOperand(const rt::Plan &plan, const rt::Step &add, int y) {
  if (add.kernel != rt::Kernel::Add || add.inputs.size() != 2 || add.outputs.size() != 1)
    return -1;
  const rt::Buffer &out = plan.buffers[y], &sum = plan.buffers[add.outputs[0]];
  for (int k = 0; k < 2; ++k) {
    const rt::Buffer &bias = plan.buffers[add.inputs[k]];
    if (add.inputs[1 - k] == y && add.inputs[k] != y && bias.shape.size() == 1 &&
        !out.shape.empty() && bias.shape[0] == out.shape.back() &&
        (bias.dtype == out.dtype || roundedInput(add, k) == rt::dtypeName(out.dtype)) &&
        sum.shape == out.shape && sum.dtype == out.dtype)
      return k;
  }
  return -1;
}

/// The epilogue activation a step computes from `x` alone, or None.
rt::Activation activationOf(const rt::Step &s) {
  if (s.kernel == rt::Kernel::Relu && s.inputs.size() == 1)
    return rt::Activation::Relu;
  if (s.kernel == rt::Kernel::Gelu && s.inputs.size() == 1 && s.attrs.value("approximate", false))
    return rt::Activation::GeluTanh;
  return rt::Activation::None;
}

/// The tanh GELU step that reads `x` first, when every other reader of x
/// comes after it (the fused step, run there, then keeps x), or -1.
int geluKeepingInput(PlanIndex &index, int x) {
  const std::vector<int> &r = index.readers(x);
  if (r.size() < 2 || activationOf(index.step(r[0])) != rt::Activation::GeluTanh)
    return -1;
  const rt::Buffer &in = index.buffer(x), &out = index.buffer(index.step(r[0]).outputs[0]);
  return in.dtype == out.dtype && in.shape == out.shape ? r[0] : -1;
}

void run(PlanIndex &index, const PassContext &) {
  const rt::Plan &plan = index.plan();
  for (int i = 0; i < index.numSteps(); ++i) {
    if (index.erased(i) || !oneGemm(plan, index.step(i)))
      continue;
    // Whether the GEMM may move from `from` to `to`: later, with no step in
    // between writing a or b in place (updates, assign).
    std::vector<int> ab = {index.step(i).inputs[0], index.step(i).inputs[1]};
    auto canMove = [&](int from, int to) {
      return to > from && !index.writtenBetween(ab, from, to);
    };
    int addAt = index.soleReader(index.step(i).outputs[0]);
    if (!canMove(i, addAt))
      continue;
    const rt::Step &add = index.step(addAt);
    int k = biasOperand(plan, add, index.step(i).outputs[0]);
    if (k < 0)
      continue;
    std::vector<std::string> round = {roundedInput(index.step(i), 0),
                                      roundedInput(index.step(i), 1), roundedInput(add, k)};
    rt::Step &mm = index.edit(i);
    mm.kernel = rt::Kernel::MatmulBias;
    mm.inputs.push_back(add.inputs[k]);
    mm.outputs = add.outputs;
    auto activation = [&](rt::Activation a) { mm.attrs[rt::attr::kActivation] = rt::activationName(a); };
    activation(rt::Activation::None);
    int at = addAt;
    int next = index.soleReader(mm.outputs[0]);
    int gelu = geluKeepingInput(index, mm.outputs[0]);
    if (canMove(at, next) && activationOf(index.step(next)) != rt::Activation::None) {
      index.erase(at);
      at = next;
      activation(activationOf(index.step(at)));
      mm.outputs = index.step(at).outputs;
    } else if (gelu >= 0 && canMove(at, gelu)) {
      index.erase(at);
      at = gelu;
      activation(rt::Activation::GeluTanh);
      mm.outputs = {index.step(at).outputs[0], mm.outputs[0]};
    }
    if (round != std::vector<std::string>(3, ""))
      mm.attrs["round_inputs"] = round;
    index.erase(at);
    index.move(i, at); // runs where the last step it replaces ran
  }
}

} // namespace

const PlanPass gemmEpilogues = {
    "gemm-epilogues", "bias adds and activations after GEMMs", true, false, epilogueTarget, run};

} // namespace ampc::plan
