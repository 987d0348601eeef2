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

} // namespace ampc

#endif
