// Loading and saving graphs by file extension: `.json` (format v1) or `.mlir`.
#ifndef AMPC_COMPILER_GRAPHIO_H
#define AMPC_COMPILER_GRAPHIO_H

#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

/// Reads and verifies a graph. Throws GraphError (without the file name).
mlir::OwningOpRef<mlir::ModuleOp> loadGraph(mlir::MLIRContext &ctx,
                                            const std::string &path);
/// Parses and verifies a graph from `text` in the format `name`'s extension
/// names (the reader behind loadGraph). Throws GraphError.
mlir::OwningOpRef<mlir::ModuleOp> parseGraph(mlir::MLIRContext &ctx, const std::string &text,
                                             const std::string &name);

/// The graph as text in the format `path`'s extension names.
std::string printGraph(mlir::ModuleOp module, const std::string &path);

/// Writes the graph atomically (temporary file, then rename). Throws GraphError.
void saveGraph(mlir::ModuleOp module, const std::string &path);

/// Writes `text` to `path` atomically. Throws GraphError.
void writeFileAtomically(const std::string &path, const std::string &text);

/// The one graph.graph of a module; throws GraphError if there is not exactly one.
mlir::Operation *theGraph(mlir::ModuleOp module);

} // namespace ampc

#endif
