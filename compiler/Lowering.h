// Lowering a graph to an execution plan (runtime/core/Plan.h, docs/runtime.md).
#ifndef AMPC_COMPILER_LOWERING_H
#define AMPC_COMPILER_LOWERING_H

#include "compiler/Probes.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/core/Plan.h"

namespace ampc {

/// One buffer per value (inputs, params, consts, node results), one step per
/// node in block order with its attributes (defaults filled in), the plan's
/// counters, then liveness-based memory planning for `target`. `constant`
/// nodes become const buffers. Where the target fuses casts, a cast of an f32
/// param or input to f16/bf16 read only by kernels that widen their operands
/// anyway (the kernel traits' widened inputs) runs no step: its readers get
/// `round_inputs` and read the f32 source rounded, the same values without an
/// f16 copy. The target's passes run on a copy of `module` first (runTargetPasses:
/// where casts are not fused, weights keep f16/bf16 copies that their
/// updates rewrite), and an `assign` refreshing a copy after its param's
/// update is folded into the update (`writes_copy`). `probes` adds numerics probes (compiler/Probes.h); without them
/// the plan has none. Throws GraphError for a graph without exactly one
/// graph.graph.
///
/// Without probes, the casts between f32 and f16/bf16 next to kernels that
/// read and write any float dtype run inside those kernels
/// (compiler/CastFolding.h, the same bits). With probes they stay, so that a
/// probe names the cast that overflowed. Likewise, on targets with
/// `elementwise_chains`, elementwise ops whose intermediate values nothing
/// else reads run as one step (compiler/ElementwiseFusion.h), relus join
/// the batch norms before them (compiler/NormActivationFusion.h), residual
/// gradients' adds the layer norm backwards that read them
/// (compiler/ResidualGradFusion.h) and scales
/// the softmaxes beside them (compiler/SoftmaxScaleFusion.h), and a
/// softmax's backward reads its logits (compiler/SoftmaxLogitsFusion.h), only without
/// probes. `fusions` turns each fusion off (tests compare the plans;
/// users and benchmarks measure with `--no-fuse`, docs/cli.md).
struct Fusions {
  bool weightCopies = true, gemmEpilogues = true, gradEpilogues = true, castFolding = true,
       normActivations = true, softmaxScales = true, softmaxLogits = true,
       residualGrads = true, elementwiseChains = true;
};
rt::Plan lowerToPlan(mlir::ModuleOp module, const rt::Target &target = rt::cpuTarget(),
                     const ProbeOptions &probes = {}, const Fusions &fusions = {});

/// The plan kernel of a graph op: its name without the `graph.` prefix.
std::string kernelName(mlir::Operation *op);

} // namespace ampc

#endif
