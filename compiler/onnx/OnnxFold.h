// Helpers of the import-time evaluation of constants (OnnxFold.cpp, the
// shape arithmetic, and OnnxFoldLogic.cpp, comparisons, selection and
// indexing): numpy broadcasting over host tensors, rounding to a dtype.
#ifndef AMPC_COMPILER_ONNX_ONNXFOLD_H
#define AMPC_COMPILER_ONNX_ONNXFOLD_H

#include <functional>

#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

/// Larger results stay in the graph (elements).
constexpr int64_t kMaxFolded = int64_t(1) << 22;

/// Row-major strides of `shape`, in elements.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape);
/// `v` rounded to `dtype` as a cast would (integers truncate, i1 is v != 0).
double toDtype(double v, const std::string &dtype);
/// The numpy broadcast of `shapes`; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcastShape(
    llvm::ArrayRef<std::vector<int64_t>> shapes);
/// Elementwise `f` over the numpy broadcast of `in` (f reads one value of
/// each input, in order), rounded to `dtype`; nullopt when the shapes do not
/// broadcast or the result is larger than kMaxFolded.
std::optional<HostTensor> broadcastEach(llvm::ArrayRef<const HostTensor *> in,
                                        const std::string &dtype,
                                        const std::function<double(const double *)> &f);
/// Evaluates the comparison, logic, selection and indexing ops (Equal, Less,
/// Greater, LessOrEqual, GreaterOrEqual, Not, And, Or, Xor, Where, Expand,
/// Mod, ScatterND, Trilu, Transpose) on known inputs;
/// nullopt when `op` is none of them or the result is too large.
std::optional<HostTensor> foldLogic(Importer &im, const onnx::NodeProto &n,
                                    llvm::ArrayRef<const HostTensor *> in);
/// Whether foldLogic evaluates `op`.
bool isLogicFold(const std::string &op);
/// Evaluates float math on known inputs (OnnxFoldMath.cpp: Sin, Cos, Neg,
/// Sqrt, Exp, Log, Reciprocal, Tanh, Abs, Sign, Floor, Ceil, Round, Pow,
/// MatMul, Einsum) in f64, rounded
/// once to the dtype; nullopt when `op` is none of them, the inputs do not
/// fit it, or the work is too large.
std::optional<HostTensor> foldMath(Importer &im, const onnx::NodeProto &n,
                                   llvm::ArrayRef<const HostTensor *> in);
/// Whether foldMath evaluates `op`.
bool isMathFold(const std::string &op);

} // namespace ampc::onnx_import

#endif
