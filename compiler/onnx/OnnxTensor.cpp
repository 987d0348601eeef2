#include "compiler/onnx/OnnxTensor.h"

#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <google/protobuf/io/coded_stream.h>

#include "compiler/Diagnostics.h"
#include "runtime/core/Convert.h"
#include "runtime/core/DType.h"

namespace ampc::onnx_import {

using onnx::TensorProto;

std::optional<std::string> dtypeOf(int onnxType) {
  switch (onnxType) {
  case TensorProto::FLOAT: return "f32";
  case TensorProto::FLOAT16: return "f16";
  case TensorProto::BFLOAT16: return "bf16";
  case TensorProto::DOUBLE: return "f64";
  case TensorProto::INT32: return "i32";
  case TensorProto::INT64: return "i64";
  case TensorProto::BOOL: return "i1";
  default: return std::nullopt;
  }
}

int onnxTypeOf(const std::string &dtype) {
  static const std::pair<const char *, int> types[] = {
      {"f32", TensorProto::FLOAT}, {"f16", TensorProto::FLOAT16},
      {"bf16", TensorProto::BFLOAT16}, {"f64", TensorProto::DOUBLE},
      {"i32", TensorProto::INT32}, {"i64", TensorProto::INT64}, {"i1", TensorProto::BOOL}};
  for (auto [name, type] : types)
    if (dtype == name)
      return type;
  throw GraphError(dtype + " values cannot be exported: opset 17 (ONNX 1.12) has no such type" +
                   (dtype.rfind("f8", 0) == 0 ? " (FP8 types arrived with ONNX 1.14's opset 19)"
                                               : ""));
}

void loadExternalData(TensorProto &t, const std::string &dir, const std::string &where) {
  auto fail = [&](const std::string &what) { return GraphError(where + ": " + what); };
  if (dir.empty())
    throw fail("tensors stored in external files are not supported here");
  std::string location;
  int64_t offset = 0, length = -1;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    auto number = [&](const std::string &v) {
      char *end = nullptr;
      long long x = std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || *end || x < 0)
        throw fail("external data " + e.key() + " '" + v + "' is not a size");
      return int64_t(x);
    };
    if (e.key() == "location")
      location = e.value();
    else if (e.key() == "offset")
      offset = number(e.value());
    else if (e.key() == "length")
      length = number(e.value());
  }
  if (location.empty() || location[0] == '/' || ("/" + location + "/").find("/../") !=
                                                    std::string::npos)
    throw fail("external data location '" + location +
               "' is not a file in the model's folder");
  std::string path = dir + "/" + location;
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in)
    throw fail("cannot read external data file '" + path + "'");
  int64_t size = in.tellg();
  if (length < 0)
    length = size - std::min(offset, size);
  if (offset > size || length > size - offset)
    throw fail("external data [" + std::to_string(offset) + ", +" + std::to_string(length) +
               ") lies beyond the end of '" + path + "' (" + std::to_string(size) + " bytes)");
  std::string bytes(length, '\0');
  in.seekg(offset);
  in.read(bytes.data(), length);
  if (!in)
    throw fail("cannot read external data file '" + path + "'");
  t.set_raw_data(std::move(bytes));
  t.clear_external_data();
  t.set_data_location(TensorProto::DEFAULT);
}

HostTensor readTensor(const TensorProto &t, const std::string &where) {
  auto fail = [&](const std::string &what) { return GraphError(where + ": " + what); };
  std::optional<std::string> dtype = dtypeOf(t.data_type());
  if (!dtype)
    throw fail("tensors of ONNX data type " + std::to_string(t.data_type()) +
               " are not supported");
  if (t.data_location() == TensorProto::EXTERNAL)
    throw fail("tensors stored in external files are not supported");
  HostTensor out{*dtype, {}, {}};
  int64_t n = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d && n > (int64_t(1) << 40) / d))
      throw fail("the shape is negative or too large");
    out.shape.push_back(d);
    n *= d;
  }
  rt::DType dt = *rt::parseDType(*dtype);
  // The stored values are counted against the shape before anything is
  // allocated: a shape may claim far more values than the message holds.
  if (t.has_raw_data()) {
    const std::string &raw = t.raw_data();
    if ((int64_t)raw.size() != n * (int64_t)rt::dtypeSize(dt))
      throw fail("raw_data holds " + std::to_string(raw.size()) + " bytes, the shape needs " +
                 std::to_string(n * rt::dtypeSize(dt)));
    out.data.resize(n);
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = rt::loadElement(reinterpret_cast<const std::byte *>(raw.data()), dt, i);
    return out;
  }
  // Typed fields: f16, bf16, bool and i32 travel in int32_data (f16/bf16 as
  // their bits), i64 in int64_data, f32 in float_data, f64 in double_data.
  auto count = [&](int64_t have) {
    if (have != n)
      throw fail("holds " + std::to_string(have) + " values, the shape needs " +
                 std::to_string(n));
    out.data.resize(n);
  };
  switch (t.data_type()) {
  case TensorProto::FLOAT:
    count(t.float_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = t.float_data(i);
    break;
  case TensorProto::DOUBLE:
    count(t.double_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = t.double_data(i);
    break;
  case TensorProto::INT64:
    count(t.int64_data_size());
    for (int64_t i = 0; i < n; ++i)
      out.data[i] = (double)t.int64_data(i);
    break;
  default: { // int32_data
    count(t.int32_data_size());
    for (int64_t i = 0; i < n; ++i) {
      int32_t v = t.int32_data(i);
      if (dt == rt::DType::F16 || dt == rt::DType::BF16) {
        uint16_t bits = uint16_t(v);
        out.data[i] = rt::loadElement(reinterpret_cast<const std::byte *>(&bits), dt, 0);
      } else {
        out.data[i] = v;
      }
    }
  }
  }
  return out;
}

TensorProto writeTensor(const HostTensor &t, const std::string &name) {
  TensorProto p;
  p.set_name(name);
  p.set_data_type(onnxTypeOf(t.dtype));
  for (int64_t d : t.shape)
    p.add_dims(d);
  rt::DType dt = *rt::parseDType(t.dtype);
  std::string raw(t.data.size() * rt::dtypeSize(dt), '\0');
  for (size_t i = 0; i < t.data.size(); ++i)
    rt::storeElement(reinterpret_cast<std::byte *>(raw.data()), dt, i, t.data[i]);
  p.set_raw_data(std::move(raw));
  return p;
}

template <typename M> bool parseMessage(const std::string &bytes, M &message) {
  if (bytes.size() > size_t(INT_MAX))
    return false;
  google::protobuf::io::CodedInputStream in(reinterpret_cast<const uint8_t *>(bytes.data()),
                                            (int)bytes.size());
  in.SetTotalBytesLimit(INT_MAX);
  in.SetRecursionLimit(64);
  return message.ParseFromCodedStream(&in) && in.ConsumedEntireMessage();
}

template bool parseMessage(const std::string &, onnx::ModelProto &);
template bool parseMessage(const std::string &, onnx::TensorProto &);

} // namespace ampc::onnx_import
