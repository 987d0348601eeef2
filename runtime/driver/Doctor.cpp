#include "runtime/driver/Doctor.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/Probes.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::rt {

std::vector<ValueRange> valueRanges(const Plan &plan, const std::vector<double> &ranges,
                                    const std::string &lowDtype) {
  if (plan.find(kRanges) < 0)
    throw RuntimeError("the plan has no range probes");
  LowRange low = lowRange(lowDtype);
  std::vector<ValueRange> values;
  for (const Step &s : plan.steps) {
    if (s.kernel != Kernel::RecordRange && s.kernel != Kernel::RecordScoresRange)
      continue;
    StepAttrs attrs(s);
    int64_t slot = attrs.getInt("slot", -1);
    if (slot < 0 || (size_t)(slot + 1) * kRangeFields > ranges.size())
      throw RuntimeError("the ranges hold no row " + std::to_string(slot));
    const double *row = ranges.data() + slot * kRangeFields;
    ValueRange v;
    v.name = attrs.getStr("of", "");
    v.step = attrs.getStr("step", "");
    v.kernel = attrs.getStr("kernel", "");
    v.backward = attrs.getBool("backward", false);
    v.scores = s.kernel == Kernel::RecordScoresRange;
    int id = plan.find(v.name);
    v.dtype = id >= 0 ? plan.buffers[id].dtype : DType::F32;
    v.maxAbs = row[kMaxAbs];
    v.minNonzeroAbs = row[kMinNonzeroAbs];
    v.elements = row[kElements];
    v.flushFraction = v.elements > 0 ? row[kUnderflows] / v.elements : 0;
    v.nearMaxFraction = v.elements > 0 ? row[kNearOverflows] / v.elements : 0;
    v.subnormalFraction = v.elements > 0 ? row[kSubnormals] / v.elements : 0;
    double top = v.fp8() ? (v.dtype == DType::F8E4M3 ? 448.0 : 57344.0) : low.max;
    v.headroomLog2 = v.maxAbs > 0 ? std::log2(top / v.maxAbs) : INFINITY;
    v.maxAbsUnscaled = row[kMaxAbsUnscaled];
    values.push_back(std::move(v));
  }
  return values;
}

DoctorVerdict diagnose(const std::vector<ValueRange> &values, const std::string &lowDtype) {
  LowRange low = lowRange(lowDtype);
  DoctorVerdict d;
  for (const ValueRange &v : values) {
    if (v.scores) {
      if (v.maxAbs > low.max)
        d.scoresBeyondLow.push_back(v.name);
      continue;
    }
    if (v.fp8()) {
      if (v.headroomLog2 < 0 && v.nearMaxFraction > kFp8SaturateLimit)
        d.fp8Margin = std::max(d.fp8Margin, (int)std::min(std::ceil(-v.headroomLog2), 64.0));
      if (v.flushFraction > kFp8FlushLimit)
        d.fp8Flushing.push_back(v.name);
      continue;
    }
    if (!v.low())
      continue;
    if (!v.backward && v.maxAbs > low.max)
      d.overflowing.push_back(v.name);
    if (v.backward) {
      d.maxGradient = std::max(d.maxGradient, v.maxAbsUnscaled);
      if (v.subnormalFraction > d.worstSubnormalFraction || d.worstUnderflow.empty()) {
        d.worstUnderflow = v.name;
        d.worstSubnormalFraction = v.subnormalFraction;
        d.worstFlushFraction = v.flushFraction;
      }
    }
  }
  // The gradients of a run whose forward overflows are not worth sizing by.
  if (d.maxGradient > 0 && d.overflowing.empty()) {
    // The largest power of two S with maxGradient * S at most half L's
    // largest value: one halving of room, as dynamic scaling would leave.
    double s = std::floor(std::log2(low.max / 2 / d.maxGradient));
    d.initLossScale = std::ldexp(1.0, (int)std::clamp(s, 0.0, 24.0));
  }
  return d;
}

} // namespace ampc::rt
