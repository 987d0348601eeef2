// ONNX tensors (TensorProto) as host values: the importer's initializers and
// constants, and the inputs and outputs of ONNX's backend test cases.
#ifndef AMPC_COMPILER_ONNX_ONNXTENSOR_H
#define AMPC_COMPILER_ONNX_ONNXTENSOR_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "onnx/onnx_pb.h"

namespace ampc::onnx_import {

/// A tensor held on the host, every element widened to double (exact for
/// every float dtype and for integers up to 2^53).
struct HostTensor {
  std::string dtype; // an ampc dtype name: f32 f16 bf16 f64 i32 i64 i1
  std::vector<int64_t> shape;
  std::vector<double> data;
};

/// Whether an ampc dtype name is an integer or bool one (i32, i64, i1).
inline bool isIntegerDtype(const std::string &dtype) { return dtype.rfind("i", 0) == 0; }

/// An integer element as int64, saturating: ONNX writes INT64_MAX for "to
/// the end", which a double holds as 2^63. NaN reads as 0.
inline int64_t toInt64(double v) {
  if (!(v == v))
    return 0;
  if (v >= 9223372036854775807.0)
    return INT64_MAX;
  if (v <= -9223372036854775808.0)
    return INT64_MIN;
  return (int64_t)v;
}
inline std::vector<int64_t> toInt64(const std::vector<double> &v) {
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (double x : v)
    out.push_back(toInt64(x));
  return out;
}

/// The ampc dtype of an ONNX TensorProto data type, if ampc has one.
std::optional<std::string> dtypeOf(int onnxType);
/// The ONNX data type of an ampc dtype name.
int onnxTypeOf(const std::string &dtype);

/// Reads a tensor's values (raw_data or the typed fields), checking that they
/// fill its shape. Throws GraphError naming `where`.
HostTensor readTensor(const onnx::TensorProto &t, const std::string &where);
/// Reads a tensor stored in an external file (ONNX's external data: a
/// location relative to `dir`, an offset and a length) into raw_data. A
/// location outside `dir` (absolute, or with ..), a missing file or a range
/// beyond its end throws GraphError naming `where`.
void loadExternalData(onnx::TensorProto &t, const std::string &dir, const std::string &where);
/// The tensor as a TensorProto with raw_data.
onnx::TensorProto writeTensor(const HostTensor &t, const std::string &name);

/// Parses a serialized protobuf message of type M from bytes; false if the
/// bytes are not one (truncated, garbage).
template <typename M> bool parseMessage(const std::string &bytes, M &message);

} // namespace ampc::onnx_import

#endif
