// The params of LoRA adapters (docs/training.md, "LoRA"): a linear layer
// `<layer>` with weight `<layer>.w` gets `<layer>.lora_a` [in, rank] and
// `<layer>.lora_b` [rank, out]. The zoo names them so; loading weights lets
// them start fresh from a file that has none; the Hub export merges them.
#ifndef AMPC_RUNTIME_CORE_LORANAMES_H
#define AMPC_RUNTIME_CORE_LORANAMES_H

#include <cstdint>
#include <string>
#include <string_view>

namespace ampc::rt {

inline bool isLoraAdapter(std::string_view name) {
  auto endsWith = [&](std::string_view tail) {
    return name.size() >= tail.size() && name.substr(name.size() - tail.size()) == tail;
  };
  return endsWith(".lora_a") || endsWith(".lora_b");
}

/// The layer of an adapter's param: `layer0.attn.q` for `layer0.attn.q.lora_a`.
inline std::string loraLayer(std::string_view adapter) {
  return std::string(adapter.substr(0, adapter.size() - 7));
}

/// The seed of an adapter's dropout, from its node's name
/// (`<layer>.lora_dropout`): each adapter draws its own bits, the same on
/// every platform (FNV-1a).
inline int64_t loraDropoutSeed(std::string_view dropoutName) {
  uint32_t seed = 2166136261u;
  for (char c : dropoutName)
    seed = (seed ^ (uint8_t)c) * 16777619u;
  return seed & 0x7fffffff;
}

} // namespace ampc::rt

#endif
