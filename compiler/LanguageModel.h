// Language models (docs/gpt.md): a graph whose loss is a softmax cross
// entropy of [batch, seq, vocab] logits against next-token targets.
#ifndef AMPC_COMPILER_LANGUAGEMODEL_H
#define AMPC_COMPILER_LANGUAGEMODEL_H

#include "mlir/IR/BuiltinOps.h"

namespace ampc {

/// Makes the logits the loss reads the graph's only output, and drops the
/// loss: the forward graph that sampling and tests read the logits of.
/// Throws GraphError when the graph is not a language model.
mlir::Value exposeLogits(mlir::ModuleOp module);

} // namespace ampc

#endif
