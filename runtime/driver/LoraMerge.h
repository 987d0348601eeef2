// LoRA adapters folded into the weights they adapt (docs/training.md,
// "LoRA"): what PEFT's merge_and_unload does, so that a fine-tuned model
// leaves as a plain checkpoint of the base architecture.
#ifndef AMPC_RUNTIME_DRIVER_LORAMERGE_H
#define AMPC_RUNTIME_DRIVER_LORAMERGE_H

#include <map>
#include <string>

#include "runtime/driver/Checkpoint.h"

namespace ampc::rt {

/// For each layer with adapters in `weights` (`<layer>.lora_a` [in, rank],
/// `<layer>.lora_b` [rank, out]), sets `<layer>.w` [in, out] to w + scale ·
/// lora_a · lora_b, summed in f64 and rounded once to f32, and drops the
/// adapters. `scales` gives each layer's scale (alpha / rank). Returns the
/// layers merged. Throws RuntimeError for an adapter without its pair, its
/// layer's weight or scale, or of shapes that do not chain.
int mergeLoraAdapters(Safetensors &weights, const std::map<std::string, double> &scales);

} // namespace ampc::rt

#endif
