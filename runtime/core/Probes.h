// Numerics probes: steps that the lowering adds after every step with float
// results when asked (ampc train --check-numerics, ampc doctor), and that
// record in a state buffer what those results held. With no probes asked
// for, a plan has none of them (docs/precision-doctor.md).
//  - record_non_finite(values..., flags): flags[slot] = whether any value
//    holds an inf or a NaN, each run;
//  - record_range(value, ranges[, loss_scale]): accumulates over runs, in
//    row `slot` of an f64 [probes, kRangeFields] buffer, the value's
//    magnitudes (the fields below).
#ifndef AMPC_RUNTIME_CORE_PROBES_H
#define AMPC_RUNTIME_CORE_PROBES_H

#include <cmath>
#include <cstdint>
#include <string>

namespace ampc::rt {

/// The state buffers the probes write.
constexpr const char *kNonFiniteFlags = "numerics.flags";
constexpr const char *kRanges = "numerics.ranges";

/// The range of a low-precision dtype L: its largest finite value, its
/// smallest subnormal (below which a value flushes to zero) and its
/// smallest normal value (below which it keeps fewer significant bits).
struct LowRange {
  double max, min, normal;
};
inline LowRange lowRange(const std::string &lowDtype) {
  if (lowDtype == "bf16")
    return {3.3895313892515355e38, std::ldexp(1.0, -133), std::ldexp(1.0, -126)};
  return {65504.0, std::ldexp(1.0, -24), std::ldexp(1.0, -14)};
}

/// The fields of a ranges row.
enum RangeField : int {
  kMaxAbs,          // the largest |x| (inf if any inf)
  kMinNonzeroAbs,   // the smallest non-zero |x| (0: none seen yet)
  kElements,        // elements seen, over all runs
  kUnderflows,      // elements with 0 < |x| < the `underflow` attribute
  kNearOverflows,   // elements with |x| > the `overflow` attribute
  kMaxAbsUnscaled,  // the largest finite |x| / loss_scale (no scale input: / 1)
  kSubnormals,      // elements with 0 < |x| < the `subnormal` attribute
  kRangeFields
};

} // namespace ampc::rt

#endif
