// `ampc export`: a forward graph as an ONNX model (docs/onnx.md), casts
// included, so that an AMP-rewritten graph runs in another engine.
#ifndef AMPC_COMPILER_ONNX_ONNXEXPORT_H
#define AMPC_COMPILER_ONNX_ONNXEXPORT_H

#include <string>

#include "mlir/IR/BuiltinOps.h"

namespace ampc {

/// The graph as a serialized ModelProto (opset 17). Params become
/// initializers holding their initial values (seed `seed` for random
/// kinds). Throws GraphError naming a node that has no ONNX form (training
/// and communication ops).
std::string exportOnnx(mlir::ModuleOp module, uint64_t seed = 0);

} // namespace ampc

#endif
