#include "models/PeftConfig.h"

#include <cmath>

#include "compiler/Diagnostics.h"
#include "models/HubConfig.h"

namespace ampc {

namespace {

[[noreturn]] void refuse(const std::string &what) { throw GraphError(what); }

/// A field that must be absent, null, false or empty for the zoo's adapters.
void mustBeUnset(const rt::Json &c, const char *key, const std::string &why) {
  auto it = c.find(key);
  if (it == c.end() || it->is_null() || (it->is_boolean() && !it->get<bool>()) ||
      ((it->is_object() || it->is_array() || it->is_string()) && it->empty()))
    return;
  refuse("\"" + std::string(key) + "\" is " + rt::dumpJson(*it) + ": " + why);
}

} // namespace

std::map<std::string, std::string> loraArgsFromPeftConfig(const rt::Json &c) {
  if (!c.is_object())
    refuse("not a JSON object");
  if (!c.contains("peft_type") || c["peft_type"] != "LORA")
    refuse("\"peft_type\" is " +
           (c.contains("peft_type") ? rt::dumpJson(c["peft_type"]) : "absent") +
           ": the zoo's adapters are LORA's");
  mustBeUnset(c, "use_dora", "DoRA's magnitude vectors are not in the zoo's adapters");
  mustBeUnset(c, "rank_pattern", "one rank for every layer only");
  mustBeUnset(c, "alpha_pattern", "one alpha for every layer only");
  mustBeUnset(c, "layers_to_transform", "adapters on every layer only");
  mustBeUnset(c, "modules_to_save", "modules trained whole are not adapters");
  mustBeUnset(c, "fan_in_fan_out", "GPT-2's Conv1D layers: the zoo's adapters are LLaMA's");
  if (c.contains("bias") && c["bias"] != "none")
    refuse("\"bias\" is " + rt::dumpJson(c["bias"]) + ": the zoo's adapters train no biases");
  if (!c.contains("r") || !c["r"].is_number_integer() || c["r"].get<int64_t>() <= 0)
    refuse("\"r\" must be a positive integer");
  if (!c.contains("lora_alpha") || !c["lora_alpha"].is_number() ||
      !(c["lora_alpha"].get<double>() > 0))
    refuse("\"lora_alpha\" must be a positive number");
  int64_t r = c["r"].get<int64_t>();
  double alpha = c["lora_alpha"].get<double>();
  // rsLoRA scales by alpha / sqrt(r): the same as alpha · sqrt(r) / r.
  if (c.contains("use_rslora") && c["use_rslora"].is_boolean() && c["use_rslora"].get<bool>())
    alpha *= std::sqrt((double)r);
  static const std::map<std::string, std::string> ours = {
      {"q_proj", "q"},       {"k_proj", "k"},   {"v_proj", "v"},      {"o_proj", "out"},
      {"gate_proj", "gate"}, {"up_proj", "up"}, {"down_proj", "down"}};
  std::string targets;
  const rt::Json *modules = c.contains("target_modules") ? &c["target_modules"] : nullptr;
  if (modules && modules->is_string() && *modules == "all-linear") {
    targets = "all";
  } else if (modules && modules->is_array() && !modules->empty()) {
    for (const rt::Json &m : *modules) {
      auto it = m.is_string() ? ours.find(m.get<std::string>()) : ours.end();
      if (it == ours.end())
        refuse("target module " + rt::dumpJson(m) + " is not a linear layer of LLaMA's (q_proj, "
               "k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj)");
      targets += (targets.empty() ? "" : ",") + it->second;
    }
  } else {
    refuse("\"target_modules\" must list LLaMA's modules (or be \"all-linear\"), not " +
           (modules ? rt::dumpJson(*modules) : std::string("absent")));
  }
  double dropout = c.contains("lora_dropout") && c["lora_dropout"].is_number()
                       ? c["lora_dropout"].get<double>()
                       : 0.0;
  if (dropout < 0 || dropout >= 1)
    refuse("\"lora_dropout\" must be in [0, 1)");
  return {{"lora", std::to_string(r)},
          {"lora_alpha", shortestNumberText(alpha)},
          {"lora_targets", targets},
          {"lora_dropout", shortestNumberText(dropout)}};
}

} // namespace ampc
