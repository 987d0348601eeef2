// LoRA adapters folded into the weights they adapt (docs/training.md,
// "LoRA"): what PEFT's merge_and_unload does, so that a fine-tuned model
// leaves as a plain checkpoint of the base architecture.
#ifndef AMPC_RUNTIME_DRIVER_LORAMERGE_H
#define AMPC_RUNTIME_DRIVER_LORAMERGE_H

#include <map>
#include <string>

#include "runtime/driver/Checkpoint.h"

namespace ampc::rt {

/// The weight a layer's adapters fold into: `<layer>.w` [in, out] in the
/// zoo's graphs, a PyTorch Linear's [out, in] `<layer>.weight` in an
/// imported one; and the adapters' scale (alpha / rank).
struct LoraTarget {
  std::string weight;
  bool outIn = false;
  double scale = 1.0;
};

/// For each layer with adapters in `weights` (`<layer>.lora_a` [in, rank],
/// `<layer>.lora_b` [rank, out]), adds scale · lora_a · lora_b to its
/// target's weight (transposed for an [out, in] one), summed in f64 and
/// rounded once to f32, and drops the adapters. Returns the layers merged.
/// Throws RuntimeError for an adapter without its pair, its target or its
/// weight, or of shapes that do not chain.
int mergeLoraAdapters(Safetensors &weights, const std::map<std::string, LoraTarget> &targets);

} // namespace ampc::rt

#endif
