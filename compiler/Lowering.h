// Lowering a graph to an execution plan (runtime/Plan.h).
#ifndef AMPC_COMPILER_LOWERING_H
#define AMPC_COMPILER_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "runtime/Plan.h"

namespace ampc {

/// One buffer per value (inputs, params, consts, node results), one step per
/// node in block order with its attributes (defaults filled in), then
/// liveness-based memory planning. `constant` nodes become const buffers.
/// With `fuseCasts`, a cast of an f32 param or input to f16/bf16 read only by
/// kernels that widen their operands anyway (matmul, conv2d, binary
/// elementwise ops, the filter of conv2d_backward_input) runs no step: its readers get `round_inputs` and
/// read the f32 source rounded, the same values without an f16 copy.
/// Throws GraphError for a graph without exactly one graph.graph.
rt::Plan lowerToPlan(mlir::ModuleOp module, bool fuseCasts = true);

} // namespace ampc

#endif
