// Signatures of the numerics probes (runtime/core/Probes.h).
#include "runtime/core/Probes.h"
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt::signature {
namespace {

/// The `slot` attribute: a row of `rows`.
void requireSlot(const StepView &s, int64_t rows) {
  int64_t slot = s.attrs.getInt("slot", -1);
  s.require(slot >= 0 && slot < rows, "slot " + std::to_string(slot) + " is not a row of the " +
                                          std::to_string(rows) + " probes");
}

} // namespace

void recordNonFinite(const StepView &s) {
  const Buffer &flags = s.in(s.step.inputs.size() - 1);
  s.require(flags.dtype == DType::I1 && flags.shape.size() == 1,
            "the flags must be an i1 vector");
  requireSlot(s, flags.shape[0]);
}

void recordRange(const StepView &s) {
  s.require(isFloat(s.in(0).dtype), "the value must be a float tensor");
  const Buffer &ranges = s.in(1);
  s.require(ranges.dtype == DType::F64 && ranges.shape.size() == 2 &&
                ranges.shape[1] == kRangeFields,
            "the ranges must be an f64 [probes, " + std::to_string(kRangeFields) + "] buffer");
  requireSlot(s, ranges.shape[0]);
  if (s.step.inputs.size() > 2)
    s.require(isFloatScalar(s.in(2)), "the loss scale must be a float scalar");
  s.require(s.attrs.getF64("underflow", 0) >= 0 && s.attrs.getF64("overflow", 0) >= 0 &&
                s.attrs.getF64("subnormal", 0) >= 0,
            "the thresholds must not be negative");
}

} // namespace ampc::rt::signature
