// Numerics probes (docs/precision-doctor.md; runtime/core/Probes.h): after every
// step with float results, a step that records what they held. Runs last
// but for the counters and memory planning, on the fused plan, and only
// for `ampc doctor` and `--check-numerics`, which leave the fusions out so
// that a probe names the step (or cast) that went wrong.
//
// Algorithm: `record_non_finite` after each step with float results, one
// flag each in `numerics.flags`; or `record_range` per float result, one
// row each in `numerics.ranges`, backward values with the loss scale. A
// range probe sees a value before it is rounded to L: a cast's input, or the
// f32 result of a step with an L result, which then writes it in f32 and a
// new cast step rounds it (the same bits). Each probe carries the step's
// phase and names what it probes (`of`: the step for flags, the value for
// ranges). An attention also gets a row of its scores, which it computes
// in f32 and never stores (`record_scores_range`). The backward's copies of
// forward values get none: they hold the forward's bits.
#include <algorithm>
#include <cmath>

#include "compiler/plan/PlanPass.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/Probes.h"

namespace ampc::plan {
namespace {

bool isLow(rt::DType t) { return t == rt::DType::F16 || t == rt::DType::BF16; }

int addState(rt::Plan &plan, const std::string &name, rt::DType dtype, std::vector<int64_t> shape) {
  return plan.addBuffer(name, rt::BufferKind::State, dtype, std::move(shape));
}

/// The loss scale the backward values carry, or -1.
int lossScaleOf(const rt::Plan &plan) {
  for (const rt::Step &s : plan.steps)
    if (s.kernel == rt::Kernel::UpdateLossScaling)
      return s.inputs[1];
  return plan.find("loss_scale");
}

/// The index of the step that computes the loss (the last forward step), or
/// the last step.
size_t lossStep(const rt::Plan &plan) {
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int out : plan.steps[i].outputs)
      if (out == plan.loss)
        return i;
  return plan.steps.size();
}

rt::Step probeStep(const rt::Step &of, rt::Kernel kernel, const std::string &name) {
  rt::Step probe;
  probe.name = name;
  probe.kernel = kernel;
  if (of.attrs.contains("phase"))
    probe.attrs["phase"] = of.attrs["phase"];
  return probe;
}

/// A range probe (`kernel`, reading `inputs`) recorded under `named`, a
/// value `of` computes, against `low`'s thresholds (its largest value
/// counting as `overflow` where given).
rt::Step rangeProbe(const rt::Step &of, rt::Kernel kernel, const std::string &named,
                    std::vector<int> inputs, bool backward, int64_t slot, rt::LowRange low,
                    double overflow) {
  rt::Step p = probeStep(of, kernel, named + ".range");
  p.inputs = std::move(inputs);
  p.attrs["of"] = named;
  p.attrs["step"] = of.name;
  p.attrs["kernel"] = rt::kernelName(of.kernel);
  p.attrs["backward"] = backward;
  p.attrs["underflow"] = low.min;
  p.attrs["overflow"] = overflow;
  p.attrs["subnormal"] = low.normal;
  p.attrs["slot"] = slot;
  return p;
}

/// The range of an FP8 operand as its codes hold it: x * scale against the
/// format's largest value (above it, saturated: the `overflow` count),
/// flushed where it rounds to 0 (below half the smallest subnormal),
/// subnormal below the smallest normal.
rt::Step fp8Probe(const rt::Plan &plan, const rt::Step &quantize, int state, int64_t slot,
                  bool backward) {
  bool e4m3 = plan.buffers[quantize.outputs[0]].dtype == rt::DType::F8E4M3;
  rt::LowRange format{e4m3 ? 448.0 : 57344.0, std::ldexp(1.0, e4m3 ? -10 : -17),
                      std::ldexp(1.0, e4m3 ? -6 : -14)};
  rt::Step p = rangeProbe(quantize, rt::Kernel::RecordRange,
                          plan.buffers[quantize.outputs[0]].name,
                          {quantize.inputs[0], state, quantize.inputs[1]}, backward, slot,
                          format, format.max);
  p.attrs["fp8_scaled"] = true;
  return p;
}

/// The range of an attention's scores q k^T scale (the fused op keeps them
/// in f32 and never stores them): recorded as the value `<y>.scores`, with
/// one element per score the causal mask keeps.
rt::Step scoresProbe(const rt::Plan &plan, const rt::Step &attention, int state, int64_t slot,
                     rt::LowRange low) {
  rt::Step p = rangeProbe(attention, rt::Kernel::RecordScoresRange,
                          plan.buffers[attention.outputs[0]].name + ".scores",
                          {attention.inputs[0], attention.inputs[1], state}, false, slot, low,
                          low.max / 2);
  for (const char *a : {"causal", "scale"})
    if (attention.attrs.contains(a))
      p.attrs[a] = attention.attrs[a];
  return p;
}

/// The steps after the loss that recompute forward values (the backward's
/// copies of activations: graph-autodiff's recomputations, gradient
/// checkpointing's segments): they read only what the forward made, params
/// other than the loss scale `scale`, constants and inputs, so they hold the
/// forward's bits, which the forward's own probes already record.
std::vector<bool> recomputations(const rt::Plan &plan, size_t loss, int scale) {
  std::vector<bool> forwardMade(plan.buffers.size(), false), copies(plan.steps.size(), false);
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::Step &s = plan.steps[i];
    auto forwardValue = [&](int in) {
      rt::BufferKind kind = plan.buffers[in].kind;
      return forwardMade[in] || (in != scale && (kind == rt::BufferKind::Param ||
                                                 kind == rt::BufferKind::Const ||
                                                 kind == rt::BufferKind::Input));
    };
    bool copy = i > loss && !s.inputs.empty() &&
                std::all_of(s.inputs.begin(), s.inputs.end(), forwardValue);
    copies[i] = copy;
    if (i <= loss || copy)
      for (int out : s.outputs)
        forwardMade[out] = true;
  }
  return copies;
}

/// Adds the probes, before memory planning.
void addProbes(rt::Plan &plan, const ProbeOptions &options) {
  bool ranges = options.mode == ProbeOptions::Mode::Ranges;
  rt::LowRange low = rt::lowRange(options.lowDtype);
  size_t loss = lossStep(plan);
  int scale = lossScaleOf(plan);
  std::vector<bool> copies = recomputations(plan, loss, scale);
  size_t slots = 0; // a flag per step, or a row per float result (and FP8 operand)
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::Step &s = plan.steps[i];
    if (copies[i])
      continue;
    slots += ranges && (s.kernel == rt::Kernel::Fp8Quantize || s.kernel == rt::Kernel::Attention);
    for (int out : s.outputs)
      if (rt::isFloat(plan.buffers[out].dtype)) {
        ++slots;
        if (!ranges)
          break;
      }
  }
  int state = ranges
                  ? addState(plan, rt::kRanges, rt::DType::F64, {(int64_t)slots, rt::kRangeFields})
                  : addState(plan, rt::kNonFiniteFlags, rt::DType::I1, {(int64_t)slots});
  std::vector<rt::Step> steps;
  int64_t slot = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    rt::Step step = plan.steps[i];
    if (copies[i]) {
      steps.push_back(std::move(step));
      continue;
    }
    if (!ranges) {
      rt::Step p = probeStep(step, rt::Kernel::RecordNonFinite, step.name + ".finite");
      for (int out : step.outputs)
        if (rt::isFloat(plan.buffers[out].dtype))
          p.inputs.push_back(out);
      steps.push_back(step);
      if (p.inputs.empty())
        continue;
      p.inputs.push_back(state);
      p.attrs["of"] = step.name;
      p.attrs["slot"] = slot++;
      steps.push_back(std::move(p));
      continue;
    }
    // A range probe sees a value before it is rounded to L: a cast's
    // input, or the f32 result of a step with an L result, which writes it
    // in f32 and a cast rounds it (the same bits: kernels compute in f32
    // and round their results). A step that computes nothing (data
    // movement: reshape, transpose, slice, ...) rounds nothing, and its
    // kernel takes one dtype in and out: its L result is probed as it is.
    const rt::KernelTraits *traits = &rt::traitsOf(step.kernel);
    bool isCast = traits && traits->has(rt::kConvertsDtype);
    bool computes = !traits || !traits->has(rt::kMovesValues);
    std::vector<rt::Step> after;
    std::vector<std::pair<int, int>> probed; // (value read, value named)
    for (int &out : step.outputs) {
      rt::Buffer b = plan.buffers[out]; // a copy: addBuffer may move the buffers
      if (!rt::isFloat(b.dtype))
        continue;
      if (isCast && rt::isFloat(plan.buffers[step.inputs[0]].dtype)) {
        probed.push_back({step.inputs[0], out});
      } else if (isLow(b.dtype) && computes) {
        int wide = plan.addBuffer(b.name + ".f32", rt::BufferKind::Temp, rt::DType::F32, b.shape);
        rt::Step round = probeStep(step, rt::Kernel::Cast, b.name + ".round");
        round.inputs = {wide};
        round.outputs = {out};
        round.attrs["to"] = rt::dtypeName(b.dtype);
        after.push_back(std::move(round));
        probed.push_back({wide, out});
        out = wide;
      } else {
        probed.push_back({out, out});
      }
    }
    steps.push_back(std::move(step));
    for (auto [read, named] : probed) {
      std::vector<int> inputs = {read, state};
      if (i > loss && scale >= 0)
        inputs.push_back(scale);
      after.push_back(rangeProbe(plan.steps[i], rt::Kernel::RecordRange, plan.buffers[named].name,
                                 inputs, i > loss, slot++, low, low.max / 2));
    }
    if (plan.steps[i].kernel == rt::Kernel::Fp8Quantize)
      after.push_back(fp8Probe(plan, plan.steps[i], state, slot++, i > loss));
    if (plan.steps[i].kernel == rt::Kernel::Attention)
      after.push_back(scoresProbe(plan, plan.steps[i], state, slot++, low));
    for (rt::Step &a : after)
      steps.push_back(std::move(a));
  }
  plan.steps = std::move(steps);
}

void run(PlanIndex &index, const PassContext &context) {
  addProbes(index.rewrite(), context.options.probes);
}

bool probed(const PassContext &context) { return context.probed(); }

} // namespace

const PlanPass numericsProbes = {"numerics-probes", "", false, true, probed, run};

} // namespace ampc::plan
