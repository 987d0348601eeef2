// The saved graph, JSON format v1 (docs/graph-format.md).
#ifndef AMPC_COMPILER_GRAPHJSON_H
#define AMPC_COMPILER_GRAPHJSON_H

#include <string>

#include <nlohmann/json.hpp>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

using Json = nlohmann::ordered_json;

/// Reads a saved graph. Throws GraphError naming the node or value at fault.
mlir::OwningOpRef<mlir::ModuleOp> importGraphJson(mlir::MLIRContext &ctx,
                                                  llvm::StringRef text);

/// Writes the graph of `module` as JSON text, one value or node per line.
std::string exportGraphJson(mlir::ModuleOp module);

/// An op attribute as JSON, and back. `attrFromJson` throws GraphError.
Json attrToJson(mlir::Attribute attr);
mlir::Attribute attrFromJson(mlir::MLIRContext *ctx, llvm::StringRef name,
                             const Json &value);

/// A constant's elements as a JSON list: f32 and narrower floats as the
/// shortest decimals that read back as them.
Json denseToJson(mlir::ElementsAttr value);

/// A param's `init` as JSON, and back: as attributes, except that the values
/// of kind "data" are a plain list (read as f32 of the param's `shape`).
Json initToJson(mlir::DictionaryAttr init);
/// The same without the values of kind "data" (plans carry them apart).
Json initFieldsToJson(mlir::DictionaryAttr init);
mlir::DictionaryAttr initFromJson(mlir::MLIRContext *ctx, const Json &init,
                                  llvm::ArrayRef<int64_t> shape);

} // namespace ampc

#endif
