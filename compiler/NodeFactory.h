// Creates graph nodes generically from an op name, operands and attributes,
// inferring result types: the one path shared by the builder API and the JSON
// importer, so both report bad nodes the same way.
#ifndef AMPC_COMPILER_NODEFACTORY_H
#define AMPC_COMPILER_NODEFACTORY_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OperationSupport.h"

namespace ampc {

/// Creates `graph.<op>` at the builder's insertion point and verifies it.
/// `resultTypes` is used only by ops without type inference (`fill`). Throws
/// GraphError (naming the node) on an unknown op or an invalid node.
mlir::Operation *createNode(mlir::OpBuilder &builder, llvm::StringRef op,
                            llvm::StringRef nodeName, mlir::ValueRange operands,
                            mlir::NamedAttrList attrs,
                            mlir::TypeRange resultTypes = {});

/// True when `graph.<op>` is an op of the dialect.
bool isKnownOp(mlir::MLIRContext *ctx, llvm::StringRef op);

} // namespace ampc

#endif
