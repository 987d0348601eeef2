// GEMM epilogues of the backward (docs/performance.md, "Fusions").
//
// Algorithm, for targets with `gemm_epilogues`, after the forward's
// epilogues (compiler/EpilogueFusion.cpp) and without probes:
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
#include "compiler/EpilogueFusion.h"

#include <algorithm>

#include "compiler/PlanSteps.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/ReluMask.h"

namespace ampc {
namespace {

using Shape = std::vector<int64_t>;

bool withoutFusedCasts(const rt::Step &s) { return !s.attrs.contains("round_inputs"); }

/// Whether two steps run in the same phase of an accumulation window.
bool samePhase(const rt::Step &a, const rt::Step &b) {
  return a.attrs.value("phase", "") == b.attrs.value("phase", "");
}

/// Whether `r` is a `reduce_to` summing its input over all leading rows
/// into a vector of its columns, in the input's dtype.
bool sumsColumns(const rt::Plan &plan, const rt::Step &r) {
  if (r.kernel != "reduce_to" || r.inputs.size() != 1 || r.outputs.size() != 1 ||
      !withoutFusedCasts(r))
    return false;
  const rt::Buffer &x = plan.buffers[r.inputs[0]], &y = plan.buffers[r.outputs[0]];
  return x.shape.size() >= 2 && y.shape == Shape{x.shape.back()} && y.dtype == x.dtype;
}

/// The buffer the backward of `fn` reads from the forward step that wrote
/// `x` (a `matmul_bias` of that activation): the GELU's input it keeps, or
/// its relu mask, which this adds to it as a second result. -1: none.
int keptForBackward(rt::Plan &plan, const std::vector<int> &producer, int x, const std::string &fn,
                    const rt::Buffer &dz) {
  int f = producer[x];
  if (f < 0 || plan.steps[f].kernel != "matmul_bias" ||
      plan.steps[f].attrs.value("activation", "") != fn)
    return -1;
  rt::Step &forward = plan.steps[f];
  if (fn == "gelu_tanh") {
    bool kept = forward.outputs.size() == 2 && forward.outputs[1] == x;
    return kept && plan.buffers[x].shape == dz.shape && plan.buffers[x].dtype == dz.dtype ? x : -1;
  }
  const rt::Buffer &y = plan.buffers[x];
  int64_t cols = y.shape.back();
  if (forward.outputs[0] != x || y.shape != dz.shape || !rt::maskableColumns(cols))
    return -1;
  if (forward.outputs.size() == 2)
    return forward.outputs[1];
  rt::Buffer mask;
  mask.id = (int)plan.buffers.size();
  mask.name = y.name + ".relu_mask";
  mask.dtype = rt::DType::I32;
  mask.shape = rt::reluMaskShape(rt::numElements(y.shape) / cols, cols);
  mask.bytes = rt::numElements(mask.shape) * (int64_t)rt::dtypeSize(mask.dtype);
  plan.buffers.push_back(mask);
  forward.outputs.push_back(mask.id);
  return mask.id;
}

void fuseActivationGrads(rt::Plan &plan) {
  std::vector<int> producer = writersOf(plan), sole = soleReaders(plan);
  std::vector<std::vector<int>> readers = readersOf(plan);
  std::vector<bool> erased(plan.steps.size(), false);
  for (size_t u = 0; u < plan.steps.size(); ++u) {
    const rt::Step &ub = plan.steps[u];
    std::string fn = ub.attrs.value("fn", "");
    if (ub.kernel != "unary_backward" || (fn != "relu" && fn != "gelu_tanh") ||
        ub.inputs.size() != 3 || ub.outputs.size() != 1 || !withoutFusedCasts(ub))
      continue;
    int dy = ub.inputs[2], g = producer[dy], z = ub.outputs[0];
    if (g < 0 || erased[g] || sole[dy] != (int)u || !oneGemm(plan, plan.steps[g]) ||
        !withoutFusedCasts(plan.steps[g]) || !samePhase(plan.steps[g], ub) ||
        writtenBetween(plan, plan.steps[g].inputs, g, u))
      continue;
    const rt::Buffer &dz = plan.buffers[z];
    if (dz.shape != plan.buffers[dy].shape || dz.dtype != plan.buffers[dy].dtype)
      continue;
    auto r = std::find_if(readers[z].begin(), readers[z].end(), [&](int k) {
      return !erased[k] && sumsColumns(plan, plan.steps[k]) && samePhase(plan.steps[k], ub);
    });
    if (r == readers[z].end())
      continue;
    int aux = keptForBackward(plan, producer, ub.inputs[0], fn, dz);
    if (aux < 0)
      continue;
    rt::Step fused = plan.steps[g];
    fused.kernel = "matmul_act_grad";
    fused.inputs.push_back(aux);
    fused.outputs = {z, plan.steps[*r].outputs[0]};
    fused.attrs["activation"] = fn;
    plan.steps[u] = std::move(fused);
    erased[g] = erased[*r] = true;
  }
  eraseSteps(plan, erased);
}

/// Whether `w` is a weight gradient aᵀ·b of matrices reading `b` as b.
bool weightGradOf(const rt::Plan &plan, const rt::Step &w, int b) {
  if (w.kernel != "matmul" || w.inputs.size() != 2 || w.outputs.size() != 1 || w.inputs[1] != b ||
      w.inputs[0] == b || !withoutFusedCasts(w) || !w.attrs.value("transpose_a", false) ||
      w.attrs.value("transpose_b", false))
    return false;
  const rt::Buffer &a = plan.buffers[w.inputs[0]], &bb = plan.buffers[b];
  return a.shape.size() == 2 && bb.shape.size() == 2 && bb.shape[0] > 0;
}

void fuseBiasGrads(rt::Plan &plan) {
  std::vector<std::vector<int>> readers = readersOf(plan);
  std::vector<bool> erased(plan.steps.size(), false);
  for (size_t r = 0; r < plan.steps.size(); ++r) {
    if (!sumsColumns(plan, plan.steps[r]))
      continue;
    int x = plan.steps[r].inputs[0], sum = plan.steps[r].outputs[0];
    const rt::Buffer &xb = plan.buffers[x];
    // x as a matrix: itself, or a reshape of it.
    std::vector<int> views;
    if (xb.shape.size() == 2)
      views.push_back(x);
    for (int k : readers[x]) {
      const rt::Step &s = plan.steps[k];
      const rt::KernelTraits *traits = rt::findKernelTraits(s.kernel);
      if (traits && traits->has(rt::kAliasesInput) && s.outputs.size() == 1 &&
          plan.buffers[s.outputs[0]].shape ==
              Shape{rt::numElements(xb.shape) / xb.shape.back(), xb.shape.back()})
        views.push_back(s.outputs[0]);
    }
    for (int b : views) {
      auto w = std::find_if(readers[b].begin(), readers[b].end(), [&](int k) {
        return !erased[k] && weightGradOf(plan, plan.steps[k], b) &&
               samePhase(plan.steps[k], plan.steps[r]) &&
               plan.buffers[plan.steps[k].outputs[0]].dtype == plan.buffers[sum].dtype;
      });
      if (w == readers[b].end())
        continue;
      int lo = std::min<int>(r, *w), hi = std::max<int>(r, *w);
      bool readLater =
          std::all_of(readers[sum].begin(), readers[sum].end(), [&](int k) { return k > *w; });
      if (!readLater || writtenBetween(plan, {x, b}, lo, hi))
        continue;
      plan.steps[*w].kernel = "matmul_bias_grad";
      plan.steps[*w].outputs.push_back(sum);
      erased[r] = true;
      break;
    }
  }
  eraseSteps(plan, erased);
}

} // namespace

void fuseGradEpilogues(rt::Plan &plan) {
  fuseActivationGrads(plan);
  fuseBiasGrads(plan);
}

} // namespace ampc
