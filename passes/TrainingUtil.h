// Helpers shared by the training passes (autodiff, loss scaling, optimizer).
#ifndef AMPC_PASSES_TRAININGUTIL_H
#define AMPC_PASSES_TRAININGUTIL_H

#include <vector>

#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::train {

/// The value named `name` in the graph, or null.
mlir::Value findValue(graph::GraphOp g, llvm::StringRef name);

/// Params that training updates: float, and not marked `trainable = false`.
std::vector<graph::ParamOp> trainableParams(graph::GraphOp g);

/// A builder placed after the last input/param/const of `g` (value ops come
/// first in a graph), or at its start.
mlir::OpBuilder afterValueOps(graph::GraphOp g);

/// A new `trainable = false` param (training state), placed after the last
/// input/param/const.
mlir::Value addState(graph::GraphOp g, graph::NameTable &names, llvm::StringRef name,
                     mlir::RankedTensorType type, llvm::StringRef initKind,
                     double value = 0.0);

/// Marks an op to run only on the micro-batch that applies the update, when
/// gradients are accumulated.
void markApplyPhase(mlir::Operation *op);
/// Marks an op to run only on the first micro-batch of an accumulation window.
void markFirstPhase(mlir::Operation *op);
bool isApplyPhase(mlir::Operation *op);

/// A tensor value's bytes (sub-byte dtypes take a byte an element).
int64_t tensorBytes(mlir::Value v);

/// A builder before the graph's terminator.
mlir::OpBuilder atEnd(graph::GraphOp g);

/// Whether `op` is an optimizer update (sgd, momentum, adam, lamb, lion,
/// rmsprop, adagrad): it writes operand 0 from the gradient at operand 1.
bool isOptimizerUpdate(mlir::Operation *op);
/// An optimizer update's optional grad_scale; null without one, or for any
/// other op.
mlir::Value gradScaleOf(mlir::Operation *op);

/// The name of the gradient value of a param after each pass.
inline std::string gradName(llvm::StringRef param) { return (param + ".grad").str(); }
inline std::string unscaledGradName(llvm::StringRef param) {
  return (param + ".grad_unscaled").str();
}

} // namespace ampc::train

#endif
