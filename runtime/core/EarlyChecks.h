// The finite check in parts: a plan's `check_finite` step reads every
// gradient after the whole backward, but each gradient is final once its
// last writer has run. A device with a second stream checks each part there
// as soon as its gradients are written, overlapping the rest of the backward
// (docs/cuda.md, "Overlapped checks"); only the last part's gradients are
// checked after the backward. Same result: found_inf is an OR.
#ifndef AMPC_RUNTIME_CORE_EARLYCHECKS_H
#define AMPC_RUNTIME_CORE_EARLYCHECKS_H

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::rt {

/// A part of a finite check: the check's inputs `inputs` (positions in the
/// step's input list), final once step `after` has run.
struct EarlyCheck {
  size_t after = 0;
  std::vector<int> inputs;
};

/// The parts of the plan's `check_finite` step `index`, in step order, each
/// of at least `minBytes` of gradients but the last: each input goes to the
/// part after its last writer before the check (a step whose results share
/// its memory, or a step without results that reads it: such steps, assign
/// and accumulate, write their operands in place). Empty where splitting
/// would not pay or cannot be done: fewer than two parts, or an input no
/// step writes. (found_inf's memory may hold another buffer until the
/// check's place: the parts set a flag of their own, which the device copies
/// into found_inf there.)
std::vector<EarlyCheck> earlyChecks(const Plan &plan, size_t index, int64_t minBytes);

} // namespace ampc::rt

#endif
