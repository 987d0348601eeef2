// The precision doctor's analysis (`ampc doctor`, docs/precision-doctor.md):
// the ranges that a plan's range probes gathered over a training run, per
// value, measured against the range of the low-precision dtype L, and the
// verdict drawn from them: which values overflow L in the forward, how many
// gradient elements flush to zero at the run's loss scale, and a starting
// loss scale that keeps the largest gradient below L's largest value.
#ifndef AMPC_RUNTIME_DRIVER_DOCTOR_H
#define AMPC_RUNTIME_DRIVER_DOCTOR_H

#include <string>
#include <vector>

#include "runtime/core/Plan.h"
#include "runtime/core/Probes.h"

namespace ampc::rt {

/// One probed value over the whole run.
struct ValueRange {
  std::string name;        // the value (as the plan names it)
  std::string step, kernel; // the step that computes it
  bool backward = false;   // computed after the loss
  DType dtype = DType::F32; // what it is stored in
  double maxAbs = 0;       // the largest |x| before rounding to its dtype (inf: overflowed f32)
  double minNonzeroAbs = 0; // the smallest non-zero |x| (0: none)
  double elements = 0;     // elements seen over the run
  double flushFraction = 0;   // share of elements with 0 < |x| < L's smallest subnormal
  double subnormalFraction = 0; // share with 0 < |x| < L's smallest normal (digits lost)
  double nearMaxFraction = 0; // share with |x| above half L's largest value (FP8: above
                              // the format's largest, saturated)
  /// log2(L's largest / maxAbs): powers of two of room before overflow in
  /// L (negative: it overflows; inf: all zero).
  double headroomLog2 = 0;
  double maxAbsUnscaled = 0; // the largest finite |x| / S (backward values)
  bool low() const { return dtype == DType::F16 || dtype == DType::BF16; }
  /// An FP8 operand (--dtype fp8): its row describes x * scale, as its
  /// codes hold it, against the format's largest value and smallest subnormal.
  bool fp8() const { return isFp8(dtype); }
  /// An attention's scores q k^T scale (`<y>.scores`): computed in f32
  /// inside the fused op and never stored; their row says how far they are
  /// from L's range, which the unfused form would store them in.
  bool scores = false;
};

/// An FP8 operand with more than this share of its elements flushed to 0
/// after scaling: the doctor keeps its GEMM in bf16.
constexpr double kFp8FlushLimit = 0.01;
/// An FP8 operand with more than this share saturated: the doctor asks for
/// a margin. Delayed scaling saturates a few values whenever an amax grows
/// past the history's (the largest clipped), which costs little.
constexpr double kFp8SaturateLimit = 0.01;

/// The rows of `ranges` (the plan's `numerics.ranges` buffer) as values, in
/// plan order. Throws RuntimeError if the plan has no range probes.
std::vector<ValueRange> valueRanges(const Plan &plan, const std::vector<double> &ranges,
                                    const std::string &lowDtype);

/// What the doctor recommends.
struct DoctorVerdict {
  /// Forward values that overflow L (their names in the plan).
  std::vector<std::string> overflowing;
  /// The largest finite unscaled gradient in L, 0 when no gradient is in L.
  double maxGradient = 0;
  /// A starting loss scale that keeps maxGradient below half L's largest
  /// value (a power of two in [1, 2^24]); 0 when no gradient is in L or
  /// the forward overflows (then the gradients say little).
  double initLossScale = 0;
  /// The gradient in L with the largest share of elements below L's
  /// normal range (subnormal or flushed to zero), and its shares.
  std::string worstUnderflow;
  double worstSubnormalFraction = 0, worstFlushFraction = 0;
  /// FP8: for operands saturating more than kFp8SaturateLimit of their
  /// elements, the powers of two by which their scaled values exceeded the
  /// format's largest: the margin that would have kept them (0: none);
  /// and the operands flushing more than kFp8FlushLimit of their elements to 0.
  int fp8Margin = 0;
  std::vector<std::string> fp8Flushing;
  /// Attentions whose scores exceed L's largest value: safe fused (f32
  /// inside), an overflow in the unfused form.
  std::vector<std::string> scoresBeyondLow;
};

DoctorVerdict diagnose(const std::vector<ValueRange> &values, const std::string &lowDtype);

} // namespace ampc::rt

#endif
