// Lowering a graph to an execution plan (runtime/core/Plan.h, docs/runtime.md).
#ifndef AMPC_COMPILER_LOWERING_H
#define AMPC_COMPILER_LOWERING_H

#include "compiler/plan/PlanOptions.h"
#include "mlir/IR/BuiltinOps.h"
#include "runtime/core/Plan.h"

namespace ampc {

/// One buffer per value (inputs, params, consts, node results), one step per
/// node in block order with its attributes (defaults filled in), then the
/// plan optimizer (compiler/plan/PlanOptimizer.h): fusions, probes,
/// counters and memory planning for `target`. `constant` nodes become const
/// buffers. Where the target fuses casts, a cast of an f32 param or input to
/// f16/bf16 read only by kernels that widen their operands anyway (the
/// kernel traits' widened inputs) runs no step: its readers get
/// `round_inputs` and read the f32 source rounded, the same values without
/// an f16 copy. The target's passes run on a copy of `module` first
/// (runTargetPasses: where casts are not fused, weights keep f16/bf16
/// copies that their updates rewrite) unless `weight-copies` is left out.
/// `options.probes` adds numerics probes; without them the plan has none,
/// and with them the fusions that would hide a probed step stay out.
/// Throws GraphError for a graph without exactly one graph.graph.
rt::Plan lowerToPlan(mlir::ModuleOp module, const rt::Target &target = rt::cpuTarget(),
                     const PlanOptions &options = {});

/// The plan kernel of a graph op (the kernel named as the op without its
/// `graph.` prefix), or nullopt for an op that runs none (input, param,
/// constant, return).
std::optional<rt::Kernel> kernelOf(mlir::Operation *op);

} // namespace ampc

#endif
