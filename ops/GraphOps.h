// Op classes of the `graph` dialect, generated from ops/GraphOps.td.
#ifndef AMPC_OPS_GRAPHOPS_H
#define AMPC_OPS_GRAPHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "ops/AmpPolicy.h"
#include "ops/GraphDialect.h"

#include "ops/GradBuilder.h"

#include "ops/AmpInterface.h.inc"
#include "ops/GradientInterface.h.inc"
#include "ops/NodeTypeInference.h.inc"

namespace ampc::graph {
/// Names the results of a graph op after the user's value names.
void setAsmResultNames(mlir::Operation *op, mlir::OpAsmSetValueNameFn setNameFn);
} // namespace ampc::graph

#define GET_OP_CLASSES
#include "ops/GraphOps.h.inc"

namespace ampc::graph {

/// Checks an op's result types against the inferred ones.
llvm::LogicalResult checkResultTypes(mlir::Operation *op, mlir::TypeRange inferred);

/// Result type of numpy broadcasting of two tensors of one dtype.
llvm::LogicalResult inferBroadcast(mlir::Location loc, mlir::Type lhs,
                                   mlir::Type rhs,
                                   llvm::SmallVectorImpl<mlir::Type> &types);

} // namespace ampc::graph

#endif
