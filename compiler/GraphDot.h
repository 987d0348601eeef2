// `ampc dot`: the graph as Graphviz, nodes coloured by compute dtype.
#ifndef AMPC_COMPILER_GRAPHDOT_H
#define AMPC_COMPILER_GRAPHDOT_H

#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace ampc {

/// Boxes for nodes (f32 blue, f16 orange, bf16 gold), red diamonds for casts,
/// grey ellipses for inputs, params and consts; edges carry the value's dtype.
std::string exportDot(mlir::ModuleOp module);

} // namespace ampc

#endif
