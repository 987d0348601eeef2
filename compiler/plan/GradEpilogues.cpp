// GEMM epilogues of the backward (docs/performance.md, "Fusions").
//
// Algorithm, for targets with `gemm_epilogues`, after the forward's
// epilogues (compiler/plan/GemmEpilogues.cpp) and without probes:
// 1. Activation gradients. A `unary_backward` of relu or the tanh GELU whose
//    dy is a one-GEMM `matmul` that only it reads, and whose result a
//    `reduce_to` sums down the columns (the bias gradient of the layer
//    before), becomes one `matmul_act_grad` step run where the
//    unary_backward ran (cuBLASLt's DRELU_BGRAD and DGELU_BGRAD). It reads
//    what the forward's `matmul_bias` step keeps: the GELU's input, already
//    its second result, or a relu mask, added to it as its second result.
// 2. Bias gradients. A `reduce_to` summing the columns of a matrix (or of a
//    tensor whose reshape is that matrix) that a weight gradient `matmul`
//    (aᵀ·b) reads as b joins that matmul as one `matmul_bias_grad` step, run
//    where the matmul ran (cuBLASLt's BGRADA), provided every reader of the
//    sum comes after it and nothing writes b in between.
// Steps with fused casts (`round_inputs`) stay as they are. The relu
// gradient keeps the unfused bits; the GELU's rounds once where the two
// steps rounded after each, within the matmul's tolerance.
#include <algorithm>

#include "compiler/plan/PlanPass.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/ReluMask.h"

namespace ampc::plan {
namespace {

using Shape = std::vector<int64_t>;

bool withoutFusedCasts(const rt::Step &s) { return !s.attrs.contains("round_inputs"); }

/// Whether two steps run in the same phase of an accumulation window.
bool samePhase(const rt::Step &a, const rt::Step &b) {
  return a.attrs.value("phase", "") == b.attrs.value("phase", "");
}

/// The GEMM epilogue activation of a unary function: relu, tanh GELU, or
/// None for the others.
rt::Activation epilogueOf(num::UnaryFn fn) {
  return fn == num::UnaryFn::Relu       ? rt::Activation::Relu
         : fn == num::UnaryFn::GeluTanh ? rt::Activation::GeluTanh
                                        : rt::Activation::None;
}

/// Whether `r` is a `reduce_to` summing its input over all leading rows
/// into a vector of its columns, in the input's dtype.
bool sumsColumns(const rt::Plan &plan, const rt::Step &r) {
  if (r.kernel != rt::Kernel::ReduceTo || r.inputs.size() != 1 || r.outputs.size() != 1 ||
      !withoutFusedCasts(r))
    return false;
  const rt::Buffer &x = plan.buffers[r.inputs[0]], &y = plan.buffers[r.outputs[0]];
  return x.shape.size() >= 2 && y.shape == Shape{x.shape.back()} && y.dtype == x.dtype;
}

/// The buffer the backward of `act` reads from the forward step that wrote
/// `x` (a `matmul_bias` of that activation): the GELU's input it keeps, or
/// its relu mask, which this adds to it as a second result. -1: none.
int keptForBackward(PlanIndex &index, int x, rt::Activation act, const rt::Buffer &dz) {
  int f = index.writer(x);
  if (f < 0 || index.step(f).kernel != rt::Kernel::MatmulBias ||
      rt::gemmEpilogueOf(index.step(f), rt::StepAttrs(index.step(f))).activation != act)
    return -1;
  const rt::Step &forward = index.step(f);
  const rt::Buffer &y = index.buffer(x);
  if (act == rt::Activation::GeluTanh) {
    bool kept = forward.outputs.size() == 2 && forward.outputs[1] == x;
    return kept && y.shape == dz.shape && y.dtype == dz.dtype ? x : -1;
  }
  int64_t cols = y.shape.back();
  if (forward.outputs[0] != x || y.shape != dz.shape || !rt::maskableColumns(cols))
    return -1;
  if (forward.outputs.size() == 2)
    return forward.outputs[1];
  int id = index.addBuffer(y.name + ".relu_mask", rt::DType::I32,
                           rt::reluMaskShape(rt::numElements(y.shape) / cols, cols));
  index.edit(f).outputs.push_back(id);
  return id;
}

void fuseActivationGrads(PlanIndex &index) {
  const rt::Plan &plan = index.plan();
  for (int u = 0; u < index.numSteps(); ++u) {
    const rt::Step &ub = index.step(u);
    if (index.erased(u) || ub.kernel != rt::Kernel::UnaryBackward || ub.inputs.size() != 3 ||
        ub.outputs.size() != 1 || !withoutFusedCasts(ub))
      continue;
    rt::Activation act = epilogueOf(rt::unaryCallOf(ub, rt::StepAttrs(ub)).fn);
    if (act == rt::Activation::None)
      continue;
    int dy = ub.inputs[2], g = index.writer(dy), z = ub.outputs[0];
    if (g < 0 || index.soleReader(dy) != u || !oneGemm(plan, index.step(g)) ||
        !withoutFusedCasts(index.step(g)) || !samePhase(index.step(g), ub) ||
        index.writtenBetween(index.step(g).inputs, g, u))
      continue;
    const rt::Buffer &dz = index.buffer(z);
    if (dz.shape != index.buffer(dy).shape || dz.dtype != index.buffer(dy).dtype)
      continue;
    const std::vector<int> &readers = index.readers(z);
    auto r = std::find_if(readers.begin(), readers.end(), [&](int k) {
      return sumsColumns(plan, index.step(k)) && samePhase(index.step(k), ub);
    });
    if (r == readers.end())
      continue;
    int sumAt = *r;
    int aux = keptForBackward(index, ub.inputs[0], act, index.buffer(z));
    if (aux < 0)
      continue;
    rt::Step fused = index.step(g);
    fused.kernel = rt::Kernel::MatmulActGrad;
    fused.inputs.push_back(aux);
    fused.outputs = {z, index.step(sumAt).outputs[0]};
    fused.attrs[rt::attr::kActivation] = rt::activationName(act);
    index.edit(u) = std::move(fused);
    index.erase(g);
    index.erase(sumAt);
  }
}

/// Whether `w` is a weight gradient aᵀ·b of matrices reading `b` as b.
bool weightGradOf(const rt::Plan &plan, const rt::Step &w, int b) {
  if (w.kernel != rt::Kernel::Matmul || w.inputs.size() != 2 || w.outputs.size() != 1 || w.inputs[1] != b ||
      w.inputs[0] == b || !withoutFusedCasts(w) || !w.attrs.value("transpose_a", false) ||
      w.attrs.value("transpose_b", false))
    return false;
  const rt::Buffer &a = plan.buffers[w.inputs[0]], &bb = plan.buffers[b];
  return a.shape.size() == 2 && bb.shape.size() == 2 && bb.shape[0] > 0;
}

/// The reshapes of `x` to the matrix of its rows and last axis, and x itself
/// if it is that matrix.
std::vector<int> matrixViews(PlanIndex &index, int x) {
  const rt::Buffer &xb = index.buffer(x);
  std::vector<int> views;
  if (xb.shape.size() == 2)
    views.push_back(x);
  for (int k : index.readers(x)) {
    const rt::Step &s = index.step(k);
    const rt::KernelTraits *traits = &rt::traitsOf(s.kernel);
    if (traits && traits->has(rt::kAliasesInput) && s.outputs.size() == 1 &&
        index.buffer(s.outputs[0]).shape ==
            Shape{rt::numElements(xb.shape) / xb.shape.back(), xb.shape.back()})
      views.push_back(s.outputs[0]);
  }
  return views;
}

void fuseBiasGrads(PlanIndex &index) {
  const rt::Plan &plan = index.plan();
  for (int r = 0; r < index.numSteps(); ++r) {
    if (index.erased(r) || !sumsColumns(plan, index.step(r)))
      continue;
    int x = index.step(r).inputs[0], sum = index.step(r).outputs[0];
    for (int b : matrixViews(index, x)) {
      const std::vector<int> &readers = index.readers(b);
      auto w = std::find_if(readers.begin(), readers.end(), [&](int k) {
        return weightGradOf(plan, index.step(k), b) && samePhase(index.step(k), index.step(r)) &&
               index.buffer(index.step(k).outputs[0]).dtype == index.buffer(sum).dtype;
      });
      if (w == readers.end())
        continue;
      int at = *w, lo = std::min(r, at), hi = std::max(r, at);
      const std::vector<int> &sumReaders = index.readers(sum);
      bool readLater =
          std::all_of(sumReaders.begin(), sumReaders.end(), [&](int k) { return k > at; });
      if (!readLater || index.writtenBetween({x, b}, lo, hi))
        continue;
      rt::Step &fused = index.edit(at);
      fused.kernel = rt::Kernel::MatmulBiasGrad;
      fused.outputs.push_back(sum);
      index.erase(r);
      break;
    }
  }
}

void run(PlanIndex &index, const PassContext &) {
  fuseActivationGrads(index);
  index.commit();
  fuseBiasGrads(index);
}

} // namespace

const PlanPass gradEpilogues = {"grad-epilogues",
                                "activation and bias gradients beside GEMMs",
                                true,
                                false,
                                unprobedEpilogueTarget,
                                run};

} // namespace ampc::plan
