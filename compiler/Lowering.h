// Lowering a graph to an execution plan (runtime/Plan.h).
#ifndef AMPC_COMPILER_LOWERING_H
#define AMPC_COMPILER_LOWERING_H

#include "mlir/IR/BuiltinOps.h"
#include "runtime/Plan.h"

namespace ampc {

/// One buffer per value (inputs, params, consts, node results), one step per
/// node in block order with its attributes (defaults filled in), then
/// liveness-based memory planning. `constant` nodes become const buffers.
/// Throws GraphError for a graph without exactly one graph.graph.
rt::Plan lowerToPlan(mlir::ModuleOp module);

} // namespace ampc

#endif
