// Where graph-autodiff puts backward work so that less memory stays alive
// across the step. Everything after `seed` (the backward's seed node) is the
// backward.
#ifndef AMPC_PASSES_BACKWARDPLACEMENT_H
#define AMPC_PASSES_BACKWARDPLACEMENT_H

#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::train {

/// Gradient checkpointing: the forward is cut where at most one activation
/// crosses, and the backward reads copies of each segment's activations,
/// recomputed from what the cuts keep, instead of the forward's (the last
/// segment's excepted). The graph's outputs and the results of batch norms
/// and FP8 quantizes are kept. The copies are the forward's bits.
void recomputeSegments(mlir::Operation *seed, graph::NameTable &names);

/// An activation (gelu, tanh, sigmoid, erf) or layer norm whose operands
/// stay alive for the backward anyway (params, or values the backward reads)
/// is recomputed from them where the backward first reads its result or a
/// forward cast of it: that result no longer stays alive from the forward to
/// the backward, for one more memory-bound pass (BERT-base at batch 32, seq
/// 128: each layer's FFN GELU, 24 MiB, and the f16 copies of its two layer
/// norms, 12 MiB). The recomputed values are the forward's bits.
void recomputeActivations(mlir::Operation *seed, graph::NameTable &names);

/// A forward op whose only operand is an f32 widening of an L value and whose
/// f32 result the backward reads (softmax's probabilities) is recomputed in
/// the backward from the L value, which stays alive instead: half the bytes.
/// Forward casts of the result the backward reads are remade from the copy.
void recomputeWidenedOps(mlir::Operation *seed, graph::NameTable &names);

/// A backward node that reads a forward cast reads a fresh cast
/// (`<value>.recast`) when the cast's source is a param or constant or is
/// read by the backward anyway. A graph input's cast stays alive instead:
/// the batch is bound for the whole step, its copy is half its bytes, and a
/// recast would read it again every step (as PyTorch's autocast keeps the
/// f16 input that a matmul saves for its backward).
void recastForwardCasts(mlir::Operation *seed, graph::NameTable &names);

/// Widening casts in the backward move down to their first consumer: until
/// then the narrow value lives instead.
void sinkWideningCasts(mlir::Operation *seed);

} // namespace ampc::train

#endif
