// An ONNX Einsum equation read against its operands' shapes: shared by the
// importer (OnnxEinsum.cpp, einsums as graph ops) and the import-time fold
// (OnnxFoldMath.cpp, einsums of constants).
#ifndef AMPC_COMPILER_ONNX_EINSUMEQUATION_H
#define AMPC_COMPILER_ONNX_EINSUMEQUATION_H

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampc::onnx_import {

struct EinsumEquation {
  std::vector<std::string> terms; // one per operand, spaces removed
  std::string out;                // the explicit output, or the implicit one
  std::map<char, int64_t> size;   // each label's extent
  std::map<char, int> uses;       // how often each label appears in the terms

  /// The label's extents in order.
  std::vector<int64_t> shapeOf(const std::string &labels) const;
};

/// Reads `equation` against `shapes` (one per operand) into `e`. Returns ""
/// on success, else what is wrong as one sentence fragment ("label 'i' has
/// sizes 3 and 4"). An ellipsis is refused; a label repeated within one term
/// is allowed (a diagonal). Without "->", the output is the labels used
/// once, alphabetically, as numpy defines it.
std::string parseEinsum(const std::string &equation,
                        const std::vector<std::vector<int64_t>> &shapes, EinsumEquation &e);

} // namespace ampc::onnx_import

#endif // AMPC_COMPILER_ONNX_EINSUMEQUATION_H
