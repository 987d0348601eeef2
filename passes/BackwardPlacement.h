// Where graph-autodiff puts backward work so that less memory stays alive
// across the step. Everything after `seed` (the backward's seed node) is the
// backward.
#ifndef AMPC_PASSES_BACKWARDPLACEMENT_H
#define AMPC_PASSES_BACKWARDPLACEMENT_H

#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::train {

/// A forward op whose only operand is an f32 widening of an L value and whose
/// f32 result the backward reads (softmax's probabilities) is recomputed in
/// the backward from the L value, which stays alive instead: half the bytes.
/// Forward casts of the result the backward reads are remade from the copy.
void recomputeWidenedOps(mlir::Operation *seed, graph::NameTable &names);

/// A backward node that reads a forward cast reads a fresh cast
/// (`<value>.recast`) when the cast's source is an input or param or is read
/// by the backward anyway.
void recastForwardCasts(mlir::Operation *seed, graph::NameTable &names);

/// Widening casts in the backward move down to their first consumer: until
/// then the narrow value lives instead.
void sinkWideningCasts(mlir::Operation *seed);

} // namespace ampc::train

#endif
