#include "runtime/Checkpoint.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <unistd.h>

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
  }
  return "?";
}

} // namespace

void saveCheckpoint(const std::string &path, const Executor &ex,
                    const std::map<std::string, std::string> &metadata) {
  Json header = Json::object();
  Json meta = Json::object();
  for (const auto &[k, v] : metadata)
    meta[k] = v;
  header["__metadata__"] = meta;
  int64_t offset = 0;
  std::vector<int> ids;
  for (const Buffer &b : ex.plan().buffers)
    if (b.kind == BufferKind::Param) {
      header[b.name] = {{"dtype", safetensorsDtype(b.dtype)},
                        {"shape", b.shape},
                        {"data_offsets", {offset, offset + b.bytes}}};
      offset += b.bytes;
      ids.push_back(b.id);
    }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary);
    uint64_t size = text.size();
    unsigned char le[8];
    for (int i = 0; i < 8; ++i)
      le[i] = (size >> (8 * i)) & 0xFF;
    out.write(reinterpret_cast<const char *>(le), 8);
    out.write(text.data(), text.size());
    for (int id : ids) {
      TensorRef t = ex.tensor(id);
      out.write(static_cast<const char *>(t.data), t.bytes());
    }
    if (!out) {
      std::remove(tmp.c_str());
      throw RuntimeError(path + ": cannot write the checkpoint");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw RuntimeError(path + ": cannot write the checkpoint");
  }
}

std::map<std::string, std::string> loadCheckpoint(const std::string &path, Executor &ex) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw RuntimeError(path + ": cannot read the checkpoint");
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string bytes = buffer.str();
  auto bad = [&](const std::string &what) { return RuntimeError(path + ": " + what); };
  if (bytes.size() < 8)
    throw bad("not a safetensors checkpoint (truncated header)");
  uint64_t size = 0;
  for (int i = 7; i >= 0; --i)
    size = (size << 8) | (unsigned char)bytes[i];
  if (size > bytes.size() - 8)
    throw bad("not a safetensors checkpoint (truncated header)");
  Json header;
  try {
    header = Json::parse(bytes.substr(8, size));
  } catch (const Json::parse_error &) {
    throw bad("not a safetensors checkpoint (bad header)");
  }
  const char *data = bytes.data() + 8 + size;
  uint64_t dataSize = bytes.size() - 8 - size;
  for (const Buffer &b : ex.plan().buffers) {
    if (b.kind != BufferKind::Param)
      continue;
    if (!header.contains(b.name))
      throw bad("no tensor '" + b.name + "' for the graph's param");
    const Json &t = header[b.name];
    std::vector<int64_t> shape = t.value("shape", std::vector<int64_t>{});
    std::vector<uint64_t> range = t.value("data_offsets", std::vector<uint64_t>{});
    if (t.value("dtype", "") != safetensorsDtype(b.dtype) || shape != b.shape)
      throw bad("tensor '" + b.name + "' has another dtype or shape than the graph's " +
                dtypeName(b.dtype) + " param");
    if (range.size() != 2 || range[1] < range[0] || range[1] > dataSize ||
        (int64_t)(range[1] - range[0]) != b.bytes)
      throw bad("tensor '" + b.name + "' is truncated or out of range");
    std::memcpy(ex.tensor(b.id).data, data + range[0], b.bytes);
  }
  std::map<std::string, std::string> metadata;
  if (header.contains("__metadata__"))
    for (auto it = header["__metadata__"].begin(); it != header["__metadata__"].end(); ++it)
      if (it.value().is_string())
        metadata[it.key()] = it.value().get<std::string>();
  return metadata;
}

} // namespace ampc::rt
