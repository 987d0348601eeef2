// Shards are read one at a time and appended to one buffer, so the peak is
// the weights plus one shard, not twice the weights.
#include "runtime/driver/WeightShards.h"

#include <filesystem>
#include <set>

#include "runtime/core/Errors.h"
#include "runtime/core/Files.h"
#include "runtime/core/JsonText.h"

namespace ampc::rt {

namespace {

namespace fs = std::filesystem;

bool endsWith(const std::string &s, const std::string &tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// Appends `file`'s tensors and bytes to `merged`; `from` records which file
/// gave each tensor, so that one in two files is an error naming both.
void append(Safetensors &merged, Safetensors file, std::map<std::string, std::string> &from) {
  size_t base = merged.data.size();
  for (auto &[name, t] : file.tensors) {
    if (auto it = from.find(name); it != from.end())
      throw RuntimeError(file.path + ": tensor '" + name + "' is in " + it->second + " too");
    from[name] = file.path;
    t.offset += base;
    merged.tensors[name] = t;
  }
  merged.data += file.data;
  merged.metadata.insert(file.metadata.begin(), file.metadata.end());
}

Safetensors readShards(const std::string &index, const std::string &what) {
  std::string error;
  std::optional<std::string> text = readFile(index, error);
  if (!text)
    throw RuntimeError(index + ": cannot read the " + what + ": " + error);
  std::optional<Json> json = parseJson(*text, error);
  if (!json)
    throw RuntimeError(index + ": " + error);
  if (!json->is_object() || !json->contains("weight_map") || !(*json)["weight_map"].is_object())
    throw RuntimeError(index + ": not a sharded checkpoint's index: it needs a \"weight_map\" "
                       "object of tensor names to shard files");
  // Each shard, in the order the index first names it, with its tensors.
  std::vector<std::string> shards;
  std::map<std::string, std::set<std::string>> listed;
  for (const auto &[tensor, shard] : (*json)["weight_map"].items()) {
    if (!shard.is_string())
      throw RuntimeError(index + ": tensor '" + tensor + "' maps to " + dumpJson(shard) +
                         ", not a shard file name");
    std::string name = shard.get<std::string>();
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
      throw RuntimeError(index + ": shard '" + name + "' is not a file name beside the index");
    if (listed[name].empty())
      shards.push_back(name);
    listed[name].insert(tensor);
  }
  if (shards.empty())
    throw RuntimeError(index + ": its \"weight_map\" lists no tensor");
  Safetensors merged;
  merged.path = index;
  fs::path folder = fs::path(index).parent_path();
  uintmax_t total = 0;
  for (const std::string &name : shards) {
    std::error_code ec;
    uintmax_t size = fs::file_size(folder / name, ec);
    total += ec ? 0 : size;
  }
  merged.data.reserve(total);
  std::map<std::string, std::string> from;
  for (const std::string &name : shards) {
    std::string path = (folder / name).string();
    Safetensors shard = readSafetensors(path, "shard of " + index);
    for (const std::string &tensor : listed[name])
      if (!shard.tensors.count(tensor))
        throw RuntimeError(path + ": has no tensor '" + tensor + "', which " + index +
                           " places there");
    append(merged, std::move(shard), from);
  }
  return merged;
}

} // namespace

Safetensors readWeights(const std::vector<std::string> &paths, const std::string &what) {
  if (paths.size() == 1)
    return readWeights(paths[0], what);
  Safetensors merged;
  std::map<std::string, std::string> from; // tensor -> the file it came from
  for (const std::string &path : paths) {
    Safetensors file = readWeights(path, what);
    merged.path = merged.path.empty() ? file.path : merged.path + " + " + file.path;
    append(merged, std::move(file), from);
  }
  return merged;
}

Safetensors readWeights(const std::string &path, const std::string &what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const char *name :
         {"model.safetensors", "model.safetensors.index.json", "adapter_model.safetensors"})
      if (fs::exists(fs::path(path) / name, ec))
        return readWeights((fs::path(path) / name).string(), what);
    throw RuntimeError(path + ": a folder without model.safetensors, "
                       "model.safetensors.index.json or adapter_model.safetensors: give the "
                       "weights file");
  }
  if (endsWith(path, ".index.json"))
    return readShards(path, what);
  return readSafetensors(path, what);
}

} // namespace ampc::rt
