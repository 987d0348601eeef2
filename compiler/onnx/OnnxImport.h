// `ampc import`: an ONNX model as a graph (docs/onnx.md). Initializers become
// params that keep their names and values; shape arithmetic on constants is
// evaluated at import time; each ONNX op maps to one or a few graph ops.
#ifndef AMPC_COMPILER_ONNX_ONNXIMPORT_H
#define AMPC_COMPILER_ONNX_ONNXIMPORT_H

#include <cstdint>
#include <map>
#include <string>

#include <optional>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

namespace ampc {

struct OnnxImportOptions {
  /// Fixes a dynamic first dimension of every graph input (0: none given).
  int64_t batch = 0;
  /// Fixes named dynamic dimensions (ONNX dim_param), such as "seq".
  std::map<std::string, int64_t> dims;
  /// Adds a loss on `lossOutput` (default: the first output):
  /// "softmax_cross_entropy" or "mse"; empty: none.
  std::string loss;
  std::string lossOutput;
  /// The labels input: NAME[:SHAPE:DTYPE], SHAPE as 32x10 (default: what the
  /// loss needs, i64 class ids or f32 targets).
  std::string labels;
  /// The prediction's axis that holds the classes (softmax_cross_entropy),
  /// negative from the end. Unset: the last, which rank 4 and up must not
  /// assume (PyTorch's CrossEntropyLoss reads [N, C, H, W] on axis 1).
  std::optional<int64_t> classAxis;
  /// The model file's folder: tensors stored in external files (models over
  /// 2 GB) are read from there. Empty: such tensors are refused.
  std::string modelDir;
  /// Imports attention as PyTorch writes it (MatMul with a transposed k,
  /// a constant scale, Softmax, MatMul with v) as one fused `attention`.
  bool fuseAttention = false;
};

/// Imports a serialized ModelProto. Throws GraphError: unreadable bytes, one
/// line listing every unsupported op with its node name, or the node at fault.
mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &ctx, const std::string &bytes,
                                             const std::string &graphName,
                                             const OnnxImportOptions &options);

} // namespace ampc

#endif
