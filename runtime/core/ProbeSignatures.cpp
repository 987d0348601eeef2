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

/// The ranges buffer, a row for `slot`, and thresholds that are not negative.
static void requireRangeRow(const StepView &s, const Buffer &ranges) {
  s.require(ranges.dtype == DType::F64 && ranges.shape.size() == 2 &&
                ranges.shape[1] == kRangeFields,
            "the ranges must be an f64 [probes, " + std::to_string(kRangeFields) + "] buffer");
  requireSlot(s, ranges.shape[0]);
  s.require(s.attrs.getF64("underflow", 0) >= 0 && s.attrs.getF64("overflow", 0) >= 0 &&
                s.attrs.getF64("subnormal", 0) >= 0,
            "the thresholds must not be negative");
}

void recordRange(const StepView &s) {
  s.require(isFloat(s.in(0).dtype), "the value must be a float tensor");
  requireRangeRow(s, s.in(1));
  if (s.step.inputs.size() > 2)
    s.require(isFloatScalar(s.in(2)), "the loss scale must be a float scalar");
}

/// record_scores_range(q, k, ranges): q [b, sq, h, d], k [b, sk, h, d].
void recordScoresRange(const StepView &s) {
  const Buffer &q = s.in(0), &k = s.in(1);
  s.require(isFloat(q.dtype) && q.dtype == k.dtype, "q and k must be float tensors of one dtype");
  s.require(q.shape.size() == 4 && k.shape.size() == 4 && k.shape[0] == q.shape[0] &&
                k.shape[2] == q.shape[2] && k.shape[3] == q.shape[3],
            "q " + shapeText(q.shape) + " and k " + shapeText(k.shape) +
                " must be [batch, seq, heads, head_dim] of one attention");
  requireRangeRow(s, s.in(2));
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
