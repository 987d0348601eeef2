#include "models/LoraArgs.h"

#include "compiler/GraphIO.h"
#include "ops/GraphOps.h"
#include "runtime/core/LoraNames.h"

namespace ampc {

std::vector<ModelParam> loraParams(const std::string &defaultTargets) {
  return {{"lora", "0", "LoRA adapters of this rank on lora_targets, the rest frozen (0: none)"},
          {"lora_alpha", "8", "the adapters' scale is lora_alpha / lora (PEFT's default 8)"},
          {"lora_targets", defaultTargets, "the linear layers that get adapters, or all"},
          {"lora_dropout", "0", "dropout of the adapters' input in training (PEFT's lora_dropout)"}};
}

LoraSpec loraSpec(const ModelArgs &a, const std::vector<std::string> &layers) {
  LoraSpec spec;
  if (a.get("lora") == "0")
    return spec;
  spec.rank = a.getInt("lora");
  spec.alpha = a.getNumber("lora_alpha");
  if (a.get("lora_dropout") != "0") {
    spec.dropout = a.getNumber("lora_dropout");
    if (spec.dropout >= 1)
      throw GraphError("parameter 'lora_dropout' must be below 1, got '" + a.get("lora_dropout") +
                       "'");
  }
  std::string known;
  for (const std::string &l : layers)
    known += (known.empty() ? "" : ",") + l;
  std::string list = a.get("lora_targets") == "all" ? known : a.get("lora_targets");
  size_t start = 0;
  while (start <= list.size()) {
    size_t end = std::min(list.find(',', start), list.size());
    std::string layer = list.substr(start, end - start);
    if (std::find(layers.begin(), layers.end(), layer) == layers.end())
      throw GraphError("parameter 'lora_targets' names '" + layer + "', not a linear layer of "
                       "the model; it has " + known + " (or all)");
    spec.targets.insert(layer);
    start = end + 1;
  }
  return spec;
}

void freezeAllButAdapters(mlir::ModuleOp module, const LoraSpec &lora) {
  if (lora.rank == 0)
    return;
  mlir::BoolAttr frozen = mlir::BoolAttr::get(module.getContext(), false);
  module.walk([&](graph::ParamOp p) {
    if (!rt::isLoraAdapter(p.getName().str()))
      p.setTrainableAttr(frozen);
  });
}

} // namespace ampc
