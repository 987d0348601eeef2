#include "runtime/driver/Checkpoint.h"

#include <cstring>
#include <functional>
#include <set>

#include "runtime/core/Convert.h"
#include "runtime/core/Files.h"
#include "runtime/core/JsonFields.h"

namespace ampc::rt {
namespace {

const char *safetensorsDtype(DType t) {
  switch (t) {
  case DType::F32: return "F32";
  case DType::F16: return "F16";
  case DType::BF16: return "BF16";
  case DType::F64: return "F64";
  case DType::I32: return "I32";
  case DType::I64: return "I64";
  case DType::I1: return "BOOL";
  case DType::F8E4M3: return "F8_E4M3";
  case DType::F8E5M2: return "F8_E5M2";
  }
  return "?";
}

std::optional<DType> fromSafetensorsDtype(const std::string &name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64,
                  DType::I1, DType::F8E4M3, DType::F8E5M2})
    if (name == safetensorsDtype(t))
      return t;
  return std::nullopt;
}

std::string describe(DType dtype, const std::vector<int64_t> &shape) {
  std::string s = std::string(dtypeName(dtype)) + "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Writes a safetensors file atomically: the header's size, the header
/// (padded to 8 bytes), then what `body` writes.
void writeFile(const std::string &path, const Json &header, const std::string &what,
               const std::function<void(std::ostream &)> &body) {
  std::string text = dumpJson(header);
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string why = writeFileAtomically(path, [&](std::ostream &out) {
    uint64_t size = text.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = (size >> (8 * i)) & 0xFF;
    out.write(reinterpret_cast<const char *>(le), 8);
    out.write(text.data(), text.size());
    body(out);
    return bool(out);
  });
  if (!why.empty())
    throw RuntimeError(path + ": cannot write the " + what + ": " + why);
}

Json headerWith(const std::map<std::string, std::string> &metadata) {
  Json header = Json::object();
  Json meta = Json::object();
  for (const auto &[k, v] : metadata)
    meta[k] = v;
  header["__metadata__"] = meta;
  return header;
}

} // namespace

void writeSafetensors(const std::string &path, const Safetensors &file, DType dtype,
                      const std::map<std::string, std::string> &metadata,
                      const std::string &what) {
  Json header = headerWith(metadata);
  int64_t offset = 0;
  for (const auto &[name, t] : file.tensors) {
    int64_t bytes = numElements(t.shape) * (int64_t)dtypeSize(dtype);
    header[name] = {{"dtype", safetensorsDtype(dtype)},
                    {"shape", t.shape},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  writeFile(path, header, what, [&](std::ostream &out) {
    for (const auto &[name, t] : file.tensors) {
      std::vector<float> values = valuesAsF32(file, t);
      std::vector<char> bytes(values.size() * dtypeSize(dtype));
      fromF32(values.data(), bytes.data(), dtype, values.size());
      out.write(bytes.data(), bytes.size());
    }
  });
}

void saveCheckpoint(const std::string &path, const Executor &ex,
                    const std::map<std::string, std::string> &metadata) {
  std::vector<int> ids;
  for (const Buffer &b : ex.plan().buffers)
    if (b.kind == BufferKind::Param && b.copyOf < 0) // copies follow their params
      ids.push_back(b.id);
  saveBuffers(path, ex, ids, metadata, "checkpoint");
}

void saveBuffers(const std::string &path, const Executor &ex, const std::vector<int> &buffers,
                 const std::map<std::string, std::string> &metadata, const std::string &what) {
  Json header = headerWith(metadata);
  int64_t offset = 0;
  std::vector<int> ids;
  for (int id : buffers) {
    const Buffer &b = ex.plan().buffers.at(id);
    if (header.contains(b.name))
      continue; // a buffer listed twice (an output that is also an input)
    header[b.name] = {{"dtype", safetensorsDtype(b.dtype)},
                      {"shape", b.shape},
                      {"data_offsets", {offset, offset + b.bytes}}};
    offset += b.bytes;
    ids.push_back(b.id);
  }
  writeFile(path, header, what, [&](std::ostream &out) {
    for (int id : ids) {
      std::vector<std::byte> bytes = ex.readBytes(id);
      out.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    }
  });
}

Safetensors readSafetensors(const std::string &path, const std::string &what) {
  std::string error;
  std::optional<std::string> bytes = readFile(path, error);
  if (!bytes)
    throw RuntimeError(path + ": cannot read the " + what + ": " + error);
  return parseSafetensors(std::move(*bytes), path);
}

Safetensors parseSafetensors(std::string text, const std::string &path) {
  std::string error;
  const std::string *bytes = &text;
  auto bad = [&](const std::string &what) { return RuntimeError(path + ": " + what); };
  if (bytes->size() < 8)
    throw bad("not a safetensors file (truncated header)");
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i)
    size = (size << 8) | (unsigned char)(*bytes)[i];
  if (size > bytes->size() - 8)
    throw bad("not a safetensors file (truncated header)");
  std::optional<Json> header = parseJson(std::string_view(*bytes).substr(8, size), error);
  if (!header || !header->is_object())
    throw bad("not a safetensors file (bad header" + (header ? "" : ": " + error) + ")");
  Safetensors file;
  file.path = path;
  file.data = bytes->substr(8 + size);
  for (auto it = header->begin(); it != header->end(); ++it) {
    if (it.key() == "__metadata__") {
      if (!it.value().is_object())
        throw bad("\"__metadata__\" must be an object");
      for (auto m = it.value().begin(); m != it.value().end(); ++m)
        if (m.value().is_string())
          file.metadata[m.key()] = m.value().get<std::string>();
      continue;
    }
    JsonFields<RuntimeError> f(it.value(), path + ": tensor '" + it.key() + "'");
    std::optional<DType> dtype = fromSafetensorsDtype(f.str("dtype"));
    if (!dtype)
      f.fail("unknown dtype '" + f.str("dtype") + "'");
    std::vector<int64_t> shape = f.integers("shape", 0, int64_t(1) << 40);
    std::vector<int64_t> range = f.integers("data_offsets", 0, int64_t(1) << 62);
    if (range.size() == 2 && range[1] > (int64_t)file.data.size())
      f.fail("is truncated: its bytes end at " + std::to_string(range[1]) + ", and the file " +
             "holds " + std::to_string(file.data.size()) + " bytes of tensors");
    __int128 elements = 1;
    for (int64_t d : shape)
      elements = std::min<__int128>(elements * d, __int128(1) << 62);
    if (range.size() != 2 || range[1] < range[0] ||
        __int128(range[1] - range[0]) != elements * (__int128)dtypeSize(*dtype))
      f.fail("is truncated or out of range");
    file.tensors[it.key()] = {*dtype, shape, size_t(range[0]), size_t(range[1] - range[0])};
  }
  return file;
}

void loadInputs(const Safetensors &file, Executor &ex) {
  std::set<std::string> fed;
  for (int id : ex.plan().inputs) {
    const Buffer &b = ex.plan().buffers[id];
    auto it = file.tensors.find(b.name);
    if (it == file.tensors.end())
      throw RuntimeError(file.path + ": no tensor '" + b.name + "' for the graph's input " +
                         describe(b.dtype, b.shape));
    const Safetensors::Tensor &t = it->second;
    if (t.shape != b.shape || isStoredFloat(t.dtype) != isStoredFloat(b.dtype))
      throw RuntimeError(file.path + ": tensor '" + b.name + "' is " +
                         describe(t.dtype, t.shape) + " in the file and " +
                         describe(b.dtype, b.shape) + " in the graph");
    std::vector<std::byte> bytes(b.bytes);
    convertElements(file.data.data() + t.offset, t.dtype, bytes.data(), b.dtype,
                    numElements(b.shape)); // rounds to the input's dtype
    ex.write(id, bytes.data(), bytes.size());
    fed.insert(b.name);
  }
  for (const auto &[name, t] : file.tensors)
    if (!fed.count(name))
      throw RuntimeError(file.path + ": tensor '" + name + "' names no input of the graph");
}

std::vector<float> valuesAsF32(const Safetensors &file, const Safetensors::Tensor &t) {
  std::vector<float> values(numElements(t.shape));
  std::vector<std::byte> bytes(t.bytes); // aligned for the conversion
  std::memcpy(bytes.data(), file.data.data() + t.offset, t.bytes);
  toF32(bytes.data(), t.dtype, values.data(), values.size());
  return values;
}

void loadParams(const Safetensors &file, Executor &ex) {
  for (const Buffer &b : ex.plan().buffers) {
    if (b.kind != BufferKind::Param || b.copyOf >= 0) // copies follow their params
      continue;
    auto it = file.tensors.find(b.name);
    if (it == file.tensors.end())
      throw RuntimeError(file.path + ": no tensor '" + b.name + "' for the graph's param");
    const Safetensors::Tensor &t = it->second;
    if (t.dtype != b.dtype || t.shape != b.shape)
      throw RuntimeError(file.path + ": tensor '" + b.name + "' is " +
                         describe(t.dtype, t.shape) + " in the checkpoint and " +
                         describe(b.dtype, b.shape) + " in the graph");
    ex.write(b.id, file.data.data() + t.offset, t.bytes);
  }
}

} // namespace ampc::rt
