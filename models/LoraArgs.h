// The zoo's LoRA parameters (`lora`, `lora_alpha`, `lora_targets`) for its
// decoders, and the freezing that makes a graph train its adapters alone
// (docs/training.md, "LoRA").
#ifndef AMPC_MODELS_LORAARGS_H
#define AMPC_MODELS_LORAARGS_H

#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {

/// The zoo params that every model with adapters takes.
std::vector<ModelParam> loraParams(const std::string &defaultTargets);

/// The adapters `a` asks for; `layers` are the linear layers' names that
/// `lora_targets` may list ("all" lists them all). Throws GraphError on a
/// bad value or an unknown layer.
LoraSpec loraSpec(const ModelArgs &a, const std::vector<std::string> &layers);

/// With adapters, every param but theirs is marked trainable = false: the
/// base model is frozen, and training keeps no gradient or optimizer state
/// for it.
void freezeAllButAdapters(mlir::ModuleOp module, const LoraSpec &lora);

} // namespace ampc

#endif
