// `ampc model`: a model of the zoo as a saved graph, by name and `--set`,
// or in the shape of a Hugging Face config.json (docs/gpt.md, "A
// checkpoint's config.json"), with the adapters of a PEFT adapter_config.json
// (docs/training.md, "LoRA").
#include <filesystem>
#include <iostream>

#include "compiler/GraphIO.h"
#include "mlir/IR/MLIRContext.h"
#include "models/HubConfig.h"
#include "models/Models.h"
#include "models/PeftConfig.h"
#include "runtime/core/Files.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

rt::Json readJsonObject(const std::string &path, const std::string &what) {
  std::string error;
  std::optional<std::string> text = rt::readFile(path, error);
  if (!text)
    throw CliError(path, "cannot read the " + what + ": " + error);
  std::optional<rt::Json> json = rt::parseJson(*text, error);
  if (!json)
    throw CliError(path, error);
  if (!json->is_object())
    throw CliError(path, "not a JSON object: a " + what + " is one");
  return *json;
}

namespace {

int listModels() {
  for (const ModelInfo &m : modelRegistry()) {
    std::cout << m.name << ": " << m.summary << "\n";
    for (const ModelParam &p : m.params)
      std::cout << "    " << p.key << "=" << p.defaultValue << "  " << p.help << "\n";
  }
  return 0;
}

} // namespace

int runModel(const Args &args) {
  if (args.has("list"))
    return listModels();
  std::string hubFile = args.getFile("hf-config");
  if (!hubFile.empty() && std::filesystem::is_directory(hubFile)) // a Hub model's folder
    hubFile = (std::filesystem::path(hubFile) / "config.json").string();
  const std::vector<std::string> &names = args.positionals();
  if (names.size() > 1 || (names.empty() && hubFile.empty()))
    throw UsageError("expects one model name (the models are listed by `ampc model --list`), "
                     "or --hf-config config.json");
  std::string out = outputFile(args);
  std::map<std::string, std::string> values;
  std::optional<HubModel> hub;
  if (!hubFile.empty()) {
    hub = onFile(hubFile, [&] {
      return modelFromHubConfig(readJsonObject(hubFile, "Hugging Face config.json"));
    });
    if (!names.empty() && names[0] != hub->record.name)
      throw CliError(hubFile, "describes the zoo's " + hub->record.name + ", not " + names[0]);
    values = hub->record.args;
  }
  std::string peftFile = args.getFile("peft-config");
  if (!peftFile.empty()) {
    if (std::filesystem::is_directory(peftFile)) // a PEFT adapter's folder
      peftFile = (std::filesystem::path(peftFile) / "adapter_config.json").string();
    if ((hub ? hub->record.name : names.empty() ? "" : names[0]) != "llama")
      throw UsageError("--peft-config gives the zoo's llama its adapters: ampc model llama or "
                       "--hf-config of a LLaMA-style model");
    for (auto &[key, value] : onFile(peftFile, [&] {
           return loraArgsFromPeftConfig(readJsonObject(peftFile, "PEFT adapter_config.json"));
         }))
      values[key] = value;
  }
  for (const std::string &kv : args.getAll("set")) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError("--set needs key=value, got '" + kv + "'");
    values[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  std::string name = hub ? hub->record.name : names[0];
  MLIRContext ctx;
  // A bad name or parameter is the command's fault, not the output file's.
  OwningOpRef<ModuleOp> module = onFile("model", [&] { return buildModel(ctx, name, values); });
  if (hub && ModelArgs(values).getInt("seq") > hub->maxSeq)
    throw CliError(hubFile, "seq " + values["seq"] + " is beyond its " + hub->maxSeqField + " " +
                                std::to_string(hub->maxSeq) + ": --set seq=" +
                                std::to_string(hub->maxSeq) + " or less");
  onFile(out, [&] { saveGraph(*module, out); });
  return 0;
}

} // namespace ampc::cli
