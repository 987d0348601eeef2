#include "compiler/Probes.h"

#include <cmath>

#include "runtime/core/Probes.h"

namespace ampc {
namespace {

int addState(rt::Plan &plan, const std::string &name, rt::DType dtype,
             std::vector<int64_t> shape) {
  rt::Buffer b;
  b.id = plan.buffers.size();
  b.name = name;
  b.kind = rt::BufferKind::State;
  b.dtype = dtype;
  b.shape = std::move(shape);
  b.bytes = rt::numElements(b.shape) * rt::dtypeSize(dtype);
  plan.buffers.push_back(std::move(b));
  return plan.buffers.back().id;
}

/// The loss scale the backward values carry, or -1.
int lossScaleOf(const rt::Plan &plan) {
  for (const rt::Step &s : plan.steps)
    if (s.kernel == "update_loss_scaling")
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

rt::Step probeStep(const rt::Step &of, const std::string &kernel, const std::string &name) {
  rt::Step probe;
  probe.name = name;
  probe.kernel = kernel;
  if (of.attrs.contains("phase"))
    probe.attrs["phase"] = of.attrs["phase"];
  return probe;
}

} // namespace

void addProbes(rt::Plan &plan, const ProbeOptions &options) {
  if (options.mode == ProbeOptions::Mode::None)
    return;
  bool ranges = options.mode == ProbeOptions::Mode::Ranges;
  // L's largest finite value, and the magnitude below which a value is lost
  // in L (f16: its smallest subnormal, 2^-24; bf16: 2^-133).
  bool bf16 = options.lowDtype == "bf16";
  double lMax = bf16 ? 3.3895313892515355e38 : 65504.0;
  double lMin = std::ldexp(1.0, bf16 ? -133 : -24);
  size_t loss = lossStep(plan);
  int scale = lossScaleOf(plan);
  std::vector<std::pair<size_t, int>> probed; // (step, value) of each probe slot
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int out : plan.steps[i].outputs)
      if (rt::isFloat(plan.buffers[out].dtype)) {
        probed.push_back({i, out});
        if (!ranges)
          break; // one flag per step
      }
  int state = ranges ? addState(plan, rt::kRanges, rt::DType::F64,
                                {(int64_t)probed.size(), rt::kRangeFields})
                     : addState(plan, rt::kNonFiniteFlags, rt::DType::I1,
                                {(int64_t)probed.size()});
  std::vector<rt::Step> steps;
  size_t next = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    steps.push_back(plan.steps[i]);
    for (; next < probed.size() && probed[next].first == i; ++next) {
      const rt::Step &of = plan.steps[i];
      int value = probed[next].second;
      if (ranges) {
        rt::Step p = probeStep(of, "record_range", plan.buffers[value].name + ".range");
        p.inputs = {value, state};
        if (i > loss && scale >= 0)
          p.inputs.push_back(scale);
        p.attrs["of"] = plan.buffers[value].name;
        p.attrs["underflow"] = lMin;
        p.attrs["overflow"] = lMax / 2;
        p.attrs["slot"] = (int64_t)next;
        steps.push_back(std::move(p));
      } else {
        rt::Step p = probeStep(of, "record_non_finite", of.name + ".finite");
        for (int out : of.outputs)
          if (rt::isFloat(plan.buffers[out].dtype))
            p.inputs.push_back(out);
        p.inputs.push_back(state);
        p.attrs["of"] = of.name;
        p.attrs["slot"] = (int64_t)next;
        steps.push_back(std::move(p));
      }
    }
  }
  plan.steps = std::move(steps);
}

} // namespace ampc
