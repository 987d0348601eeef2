// Signatures of the numerics probes (runtime/core/Probes.h) and of the
// training history (runtime/core/History.h).
#include "runtime/core/History.h"
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

/// record_step(history, count, found_inf, loss, lr[, loss_scale])
/// (runtime/core/History.h).
void recordStep(const StepView &s) {
  const Buffer &history = s.in(0);
  s.require(history.dtype == DType::F64 && history.shape.size() == 2 && history.shape[0] >= 1 &&
                history.shape[1] == kHistoryFields,
            "the history must be an f64 [rows, " + std::to_string(kHistoryFields) + "] buffer");
  s.require(s.in(1).dtype == DType::I64 && isScalar(s.in(1)), "the count must be an i64 scalar");
  s.require(isFlag(s.in(2)), "found_inf must be an i1 scalar");
  historyOperandsOf(s.step, s.attrs);
  for (size_t i = 3; i < s.step.inputs.size(); ++i)
    s.require(isFloatScalar(s.in(i)), "the loss, the lr, the loss scale and the norm are float "
                                      "scalars");
}

} // namespace ampc::rt::signature
