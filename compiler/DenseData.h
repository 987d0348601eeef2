// Conversions between tensor constants and the plain number lists of saved graphs.
#ifndef AMPC_COMPILER_DENSEDATA_H
#define AMPC_COMPILER_DENSEDATA_H

#include <vector>

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

namespace ampc {

/// A constant of `type` from doubles, each rounded to the dtype (nearest even).
mlir::DenseElementsAttr denseFromDoubles(mlir::RankedTensorType type,
                                         llvm::ArrayRef<double> data);

/// The elements of a constant as doubles (exact for every dtype ampc has but
/// i64 beyond 2^53).
std::vector<double> denseToDoubles(mlir::ElementsAttr value);

/// The shortest decimal double that reads back as the f32 `v`, so that saved
/// f32, f16 and bf16 numbers print as people wrote them (1e-05, not
/// 9.99999974737875e-06).
double shortestForFloat(float v);

} // namespace ampc

#endif
