// The user's names of nodes and values, as the graph ops store them.
#ifndef AMPC_OPS_GRAPHNAMES_H
#define AMPC_OPS_GRAPHNAMES_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/StringSet.h"

namespace ampc::graph {

/// The `name` of a graph op: a node's name, or an input's, param's or const's.
llvm::StringRef nodeName(mlir::Operation *op);

/// The name of a value: the matching entry of its producer's `outs`, or the
/// producer's name when `outs` is absent.
llvm::StringRef valueName(mlir::Value value);

/// True for `graph.input`, `graph.param` and `graph.const`: values, not nodes.
bool isValueOp(mlir::Operation *op);

/// True for f16, bf16, f32 and f64 tensors.
bool isFloatTensor(mlir::Type type);

/// Element type of a tensor type.
mlir::Type elementType(mlir::Type type);

/// `f32`, `f16`, `bf16`, `f64`, `i32`, `i64`, `i1`, or "" for anything else.
std::string dtypeName(mlir::Type elementType);

/// Parses a dtype name; null when it is not one.
mlir::Type parseDtype(mlir::MLIRContext *ctx, llvm::StringRef name);

/// Every node and value name of a graph, to make fresh ones: `fresh(base)`
/// returns `base`, or `base_1`, `base_2`, ... when taken, and reserves it.
class NameTable {
public:
  explicit NameTable(mlir::Operation *graph);
  std::string fresh(llvm::StringRef base);
  bool contains(llvm::StringRef name) const { return names_.contains(name); }

private:
  llvm::StringSet<> names_;
};

} // namespace ampc::graph

#endif
