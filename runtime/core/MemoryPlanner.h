// Memory planning: offsets for every buffer of a plan, reusing arena memory
// by liveness. The algorithm is described in MemoryPlanner.cpp; its three
// parts (live ranges, storage groups, placement) have a file each.
#ifndef AMPC_RUNTIME_CORE_MEMORYPLANNER_H
#define AMPC_RUNTIME_CORE_MEMORYPLANNER_H

#include "runtime/core/Plan.h"

namespace ampc::rt {

/// Assigns offsets: persistent buffers one after another; inputs and
/// temporaries in one arena, reusing memory by liveness. Outputs of aliasing
/// kernels share their input's storage; an in-place kernel's output takes
/// the storage of an input that dies there. Uses the plan's target (alignment,
/// in-order lists). Sets arenaBytes, persistentBytes, unsharedBytes and
/// liveBytes.
void planMemory(Plan &plan);

/// `plan` with every input and temporary in storage of its own: no reuse,
/// so every value survives a run (tests; the numerics check's re-run).
/// Kernels that alias or work in place copy as they must.
Plan withoutReuse(Plan plan);

} // namespace ampc::rt

#endif
