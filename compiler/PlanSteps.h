// Helpers of the plan-level fusions (compiler/EpilogueFusion.h,
// compiler/CastFolding.h): who reads a buffer, whether a step may move past
// others, erasing folded steps and the buffers they leave unused.
#ifndef AMPC_COMPILER_PLANSTEPS_H
#define AMPC_COMPILER_PLANSTEPS_H

#include <vector>

#include "runtime/core/Plan.h"

namespace ampc {

/// Per buffer, the steps that read it, in order (a step once however often
/// it reads it).
std::vector<std::vector<int>> readersOf(const rt::Plan &plan);

/// Per buffer, the step that writes it as a result, or -1.
std::vector<int> writersOf(const rt::Plan &plan);

/// Per buffer, the one step that reads it, or -1 (none, several, or the
/// plan returns it or reports it as the loss).
std::vector<int> soleReaders(const rt::Plan &plan);

/// Whether `mm` is a `matmul` step of one GEMM that can take an epilogue: b
/// a matrix, a untransposed, a non-empty sum.
bool oneGemm(const rt::Plan &plan, const rt::Step &mm);

/// Whether a step strictly between `from` and `to` writes one of `ids` in
/// place (a step without results writes its operands: updates, assign,
/// accumulate), so a read of them cannot move across it.
bool writtenBetween(const rt::Plan &plan, const std::vector<int> &ids, int from, int to);

/// "f16" or "bf16" for a tensor of those, else "": what a value stored in a
/// tensor of `dtype` is rounded to, as fused steps' rounding attributes
/// name it.
std::string roundingOf(rt::DType dtype);

/// Keeps the steps not marked in `erased`, in order.
void eraseSteps(rt::Plan &plan, const std::vector<bool> &erased);

/// Drops the temporaries no step, output or loss names (the results the
/// fusions folded away), renumbering the buffers: an unused buffer must not
/// take arena space.
void dropUnusedTemps(rt::Plan &plan);

} // namespace ampc

#endif
