// A PEFT LoRA adapter's adapter_config.json as the zoo's LoRA parameters
// (docs/training.md, "LoRA"): `ampc model --peft-config` builds the llama
// whose adapters a Hub adapter's weights fill.
#ifndef AMPC_MODELS_PEFTCONFIG_H
#define AMPC_MODELS_PEFTCONFIG_H

#include <map>
#include <string>

#include "runtime/core/JsonText.h"

namespace ampc {

/// `lora`, `lora_alpha` and `lora_targets` for the zoo's llama. Throws
/// GraphError naming the field for an adapter the zoo cannot hold (DoRA,
/// per-layer ranks, biases, modules trained whole, a module regex).
std::map<std::string, std::string> loraArgsFromPeftConfig(const rt::Json &config);

} // namespace ampc

#endif
