// Creates the backward nodes of one forward node: fresh names derived from
// the forward node's (`<node>.grad...`), result types inferred.
#ifndef AMPC_OPS_GRADBUILDER_H
#define AMPC_OPS_GRADBUILDER_H

#include <functional>
#include <string>

#include "mlir/IR/Builders.h"

namespace ampc::graph {

class GradBuilder {
public:
  /// `fresh` turns a wanted name into an unused one (and reserves it).
  GradBuilder(mlir::OpBuilder &builder, std::function<std::string(llvm::StringRef)> fresh)
      : b_(builder), fresh_(std::move(fresh)) {}

  /// The forward node whose backward is being built (names derive from it).
  void setForward(mlir::Operation *op);
  mlir::OpBuilder &builder() { return b_; }

  /// A node `graph.<op>` named `fresh(name)` (several results are named
  /// `<name>.<i>`); null (after an error) if its types do not infer.
  /// Ops without type inference (fill, updates) take `resultTypes`.
  mlir::Operation *create(llvm::StringRef op, llvm::StringRef name, mlir::ValueRange operands,
                          mlir::NamedAttrList attrs = {}, mlir::TypeRange resultTypes = {});
  /// A backward node of the forward node, named `<forward>.<suffix>`.
  mlir::Operation *node(llvm::StringRef op, mlir::ValueRange operands,
                        mlir::NamedAttrList attrs = {}, llvm::StringRef suffix = "grad");
  mlir::Value value(llvm::StringRef op, mlir::ValueRange operands,
                    mlir::NamedAttrList attrs = {}, llvm::StringRef suffix = "grad");

  // Shorthands.
  mlir::Value add(mlir::Value a, mlir::Value b) { return value("add", {a, b}); }
  mlir::Value mul(mlir::Value a, mlir::Value b) { return value("mul", {a, b}); }
  mlir::Value div(mlir::Value a, mlir::Value b) { return value("div", {a, b}); }
  mlir::Value neg(mlir::Value a) { return value("neg", {a}); }
  mlir::Value scale(mlir::Value x, double s);
  mlir::Value cast(mlir::Value x, mlir::Type elementType);
  mlir::Value reshape(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  mlir::Value transpose(mlir::Value x, llvm::ArrayRef<int64_t> perm);
  mlir::Value matmul(mlir::Value a, mlir::Value b, bool ta, bool tb);
  mlir::Value broadcastTo(mlir::Value x, llvm::ArrayRef<int64_t> shape);
  /// Sums `x` down to `like`'s shape (no node when the shapes already match).
  mlir::Value reduceTo(mlir::Value x, mlir::Value like);
  mlir::Value unaryBackward(llvm::StringRef fn, mlir::Value x, mlir::Value y, mlir::Value dy,
                            double exponent = 1.0);

private:
  mlir::OpBuilder &b_;
  std::function<std::string(llvm::StringRef)> fresh_;
  std::string forwardName_;
};

} // namespace ampc::graph

#endif
