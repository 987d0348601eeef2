// Numerics probes in a lowered plan (runtime/core/Probes.h): after every
// step with float results, a step that records what they held.
#ifndef AMPC_COMPILER_PROBES_H
#define AMPC_COMPILER_PROBES_H

#include "runtime/core/Plan.h"

namespace ampc {

struct ProbeOptions {
  enum class Mode { None, NonFinite, Ranges };
  Mode mode = Mode::None;
  /// The low-precision dtype whose range the ranges are measured against.
  std::string lowDtype = "f16";
};

/// Adds the probes (before memory planning): `record_non_finite` after each
/// step with float results, one flag each in `numerics.flags`; or
/// `record_range` per float result, one row each in `numerics.ranges`,
/// backward values with the loss scale. A range probe sees a value before
/// it is rounded to L: a cast's input, or the f32 result of a step with an
/// L result, which then writes it in f32 and a new cast step rounds it (the
/// same bits). Each probe carries the step's phase and names what it probes
/// (`of`: the step for flags, the value for ranges).
void addProbes(rt::Plan &plan, const ProbeOptions &options);

} // namespace ampc

#endif
