// Casts folded into the kernels next to them (docs/performance.md,
// "Fusions"): same bits, fewer steps and no f32 copies of f16 tensors.
#ifndef AMPC_COMPILER_CASTFOLDING_H
#define AMPC_COMPILER_CASTFOLDING_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds widening casts (f16/bf16 to f32) into the kernels that read their
/// results and narrowing casts (f32 to f16/bf16) into the kernels that write
/// their operands, where those kernels read and write any float dtype
/// (kernel trait kMixedFloat), on a plan's steps before its memory is
/// planned.
void foldCasts(rt::Plan &plan);

} // namespace ampc

#endif
