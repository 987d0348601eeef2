// Pretrained weights as Hugging Face ships them: one safetensors file, or a
// checkpoint in shards (model-00001-of-00004.safetensors ...) listed by
// model.safetensors.index.json, or the folder that holds either
// (docs/training.md, "Starting from weights in shards"); and a PEFT
// adapter's folder (adapter_model.safetensors).
#ifndef AMPC_RUNTIME_DRIVER_WEIGHTSHARDS_H
#define AMPC_RUNTIME_DRIVER_WEIGHTSHARDS_H

#include "runtime/driver/Checkpoint.h"

namespace ampc::rt {

/// Reads `path`: a safetensors file, a sharded checkpoint's index (a file
/// ending in .index.json: {"weight_map": {tensor: shard file}}, the shards
/// beside it), or a folder with model.safetensors or
/// model.safetensors.index.json. The shards' tensors are merged into one
/// file whose `path` is the index's. Throws RuntimeError naming the file and
/// the problem: a shard missing or unreadable, a tensor the index places in
/// a shard that lacks it, a tensor in two shards.
Safetensors readWeights(const std::string &path, const std::string &what = "weights file");
/// The tensors of several such paths together (a base model and a LoRA
/// adapter, say); a tensor in two of them is an error naming both.
Safetensors readWeights(const std::vector<std::string> &paths,
                        const std::string &what = "weights file");

} // namespace ampc::rt

#endif
