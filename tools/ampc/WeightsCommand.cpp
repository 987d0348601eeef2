// `ampc weights`: a checkpoint's model weights alone (no optimizer state),
// in the graph's names or in Hugging Face's, in f32, f16 or bf16: what a
// fine-tuning run hands to inference (docs/gpt.md, "Pretrained weights").
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

#include "compiler/GraphIO.h"
#include "compiler/Lowering.h"
#include "mlir/IR/MLIRContext.h"
#include "models/HubConfig.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "passes/LinearLayers.h"
#include "runtime/core/Files.h"
#include "runtime/core/LoraNames.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/HuggingFaceNames.h"
#include "runtime/driver/LoraMerge.h"
#include "runtime/driver/Weights.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {

namespace {

/// The config.json to write beside Hub-layout weights: none where the graph
/// has no zoo record, or where one that describes the same model is there
/// already (it holds what ampc does not know: token ids, the chat template's
/// name). One that describes another model is an error, before anything is
/// written.
std::optional<std::string> hubConfigFor(const std::optional<ModelRecord> &record, int64_t vocab,
                                        const std::string &dtype, const std::string &path) {
  if (!record || (record->name != "gpt2" && record->name != "llama"))
    return std::nullopt;
  int64_t rows = vocab > 0 ? vocab : ModelArgs(record->args).getInt("vocab");
  if (!std::filesystem::exists(path))
    return rt::dumpJson(hubConfigOf(*record, rows, dtype), 2) + "\n";
  std::string difference = hubConfigDifference(readJsonObject(path, "config.json"), *record, rows);
  if (!difference.empty())
    throw CliError(path, "describes another model than the graph (" + difference + "): remove "
                         "it for ampc to write this model's, or write the weights elsewhere");
  return std::nullopt;
}

/// PEFT's adapter_config.json for the adapters of `weights` (their rank from
/// lora_a's shape, alpha from the graph's scale), on `modules`, with the
/// model's `dropout` (a causal LM's task type for the zoo's). One rank and
/// alpha for all: PEFT's rank_pattern and alpha_pattern are not written.
std::string peftConfigFor(const rt::Safetensors &weights,
                          const std::map<std::string, rt::LoraTarget> &targets,
                          const std::set<std::string> &modules, double dropout,
                          bool causalLm) {
  std::optional<std::pair<int64_t, double>> shared;
  for (const auto &[name, t] : weights.tensors) {
    if (!rt::isLoraAdapter(name) || name.back() != 'a' || t.shape.size() != 2)
      continue;
    auto target = targets.find(rt::loraLayer(name));
    std::pair<int64_t, double> mine{t.shape[1], target == targets.end()
                                                    ? 0
                                                    : target->second.scale * (double)t.shape[1]};
    if (shared && *shared != mine)
      throw CliError(weights.path, "its adapters differ in rank or alpha: --layout peft writes "
                                   "one of each (merge them with --layout hf)");
    shared = mine;
  }
  double alpha = shared ? shared->second : 0;
  rt::Json config = {{"base_model_name_or_path", nullptr},
                     {"bias", "none"},
                     {"fan_in_fan_out", false},
                     {"inference_mode", true},
                     {"lora_alpha", alpha == std::floor(alpha) ? rt::Json((int64_t)alpha)
                                                               : rt::Json(alpha)},
                     {"lora_dropout", dropout},
                     {"modules_to_save", nullptr},
                     {"peft_type", "LORA"},
                     {"r", shared ? shared->first : 0},
                     {"target_modules", modules},
                     {"task_type", causalLm ? rt::Json("CAUSAL_LM") : rt::Json(nullptr)}};
  return rt::dumpJson(config, 2) + "\n";
}

} // namespace

int runWeights(const Args &args) {
  const std::string &checkpoint = inputFile(args);
  std::string graphFile = args.getFile("graph"), out = outputFile(args);
  if (graphFile.empty())
    throw UsageError("ampc weights needs --graph G: the graph the checkpoint was trained from "
                     "(its params are the weights written)");
  std::string layout = args.get("layout").value_or("graph");
  if (layout != "graph" && layout != "hf" && layout != "peft")
    throw UsageError("option '--layout' must be graph (ampc's names), hf (Hugging Face's) or "
                     "peft (LoRA adapters alone, as PEFT saves them), not '" + layout + "'");
  std::string dtypeName = args.get("save-dtype").value_or("f32");
  rt::DType dtype = dtypeName == "bf16"  ? rt::DType::BF16
                    : dtypeName == "f16" ? rt::DType::F16
                                         : rt::DType::F32;
  if (dtypeName != "f32" && dtypeName != "f16" && dtypeName != "bf16")
    throw UsageError("option '--save-dtype' must be f32, f16 or bf16, not '" + dtypeName + "'");
  bool mergeLora = args.has("merge-lora");
  if (mergeLora && layout != "graph")
    throw UsageError(layout == "hf" ? "--layout hf merges the LoRA adapters itself: drop "
                                      "--merge-lora"
                                    : "--merge-lora is for --layout graph; --layout peft "
                                      "writes the adapters alone");
  if (args.has("vocab") && layout != "hf")
    throw UsageError("--vocab cuts the padded vocabulary for --layout hf");
  int64_t vocab = args.getInt("vocab", 0, 1);
  std::optional<ModelRecord> record;
  std::map<std::string, rt::LoraTarget> loraTargets; // each adapted layer's weight and scale
  double loraDropout = 0;
  rt::Plan plan = onFile(graphFile, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> module = loadGraph(ctx, graphFile);
    record = modelRecordOf(*module);
    std::map<std::string, double> scales;
    module->walk([&](graph::DropoutOp d) { // ampc lora's adapters' dropout
      if (graph::nodeName(d).ends_with(".lora_dropout"))
        loraDropout = d.getRate().convertToDouble();
    });
    module->walk([&](graph::ScaleOp s) {
      llvm::StringRef name = graph::nodeName(s);
      if (name.consume_back(".lora_scale"))
        scales[name.str()] = s.getScale().convertToDouble();
    });
    module->walk([&](graph::GraphOp g) {
      for (train::LinearLayer &l : train::linearLayers(g))
        if (auto scale = scales.find(l.layer); scale != scales.end())
          loraTargets[l.layer] = {l.weight.getName().str(), l.outIn, scale->second};
    });
    return lowerToPlan(*module);
  });
  rt::Safetensors file = onFile(checkpoint, [&] {
    rt::Safetensors read = rt::readSafetensors(checkpoint);
    return args.has("ema") ? rt::averagedWeights(std::move(read)) : read;
  });
  // Each param's f32 master where the run kept one (O2), else the param
  // (with --ema, its average where it has one).
  rt::Safetensors weights;
  weights.path = checkpoint;
  for (const rt::Buffer &b : plan.buffers) {
    if (b.kind != rt::BufferKind::Param || b.copyOf >= 0)
      continue;
    auto it = file.tensors.find(b.name + ".master");
    if (it == file.tensors.end())
      it = file.tensors.find(b.name);
    if (it == file.tensors.end())
      throw CliError(checkpoint, "no tensor '" + b.name + "', a param of " + graphFile +
                                     ": a checkpoint of another graph?");
    if (it->second.shape != b.shape || !rt::isStoredFloat(it->second.dtype))
      throw CliError(checkpoint, "tensor '" + it->first + "' is " +
                                     rt::dtypeName(it->second.dtype) +
                                     " of another shape than the param's: a checkpoint of "
                                     "another graph?");
    weights.tensors[b.name] = it->second;
  }
  weights.data = std::move(file.data);
  int merged = 0; // the Hub's architectures have no adapters: they are folded in
  if (layout == "hf" || mergeLora)
    onFile(checkpoint, [&] { merged = rt::mergeLoraAdapters(weights, loraTargets); });
  if (mergeLora && merged == 0)
    throw CliError(graphFile, "has no LoRA adapters to merge (ampc lora adds them)");
  if (layout == "hf")
    weights = onFile(checkpoint, [&] { return rt::toHuggingFace(weights, vocab); });
  // The JSON file that describes the weights, written beside them: the
  // model's config.json, or the adapters' adapter_config.json.
  std::optional<std::string> config;
  std::filesystem::path folder = std::filesystem::path(out).parent_path();
  std::string configFile = (folder / (layout == "peft" ? "adapter_config.json"
                                                        : "config.json")).string();
  if (layout == "peft")
    weights = onFile(checkpoint, [&] {
      std::string alsoTrained; // ampc lora --also-train's: PEFT's modules_to_save
      bool adapted = std::any_of(plan.buffers.begin(), plan.buffers.end(),
                                 [](const rt::Buffer &a) { return rt::isLoraAdapter(a.name); });
      for (const rt::Buffer &b : plan.buffers)
        if (adapted && b.kind == rt::BufferKind::Param && b.trainable &&
            !rt::isLoraAdapter(b.name))
          alsoTrained = b.name;
      if (!alsoTrained.empty())
        throw CliError(graphFile, "trains '" + alsoTrained + "' beside its adapters: --layout "
                                  "peft writes the adapters alone; write the whole model with "
                                  "--merge-lora");
      std::set<std::string> modules;
      // A graph of no zoo model (an import) names its layers as its modules.
      rt::Safetensors adapters = rt::toPeftAdapters(weights, modules, !record);
      double dropout = record && record->args.count("lora_dropout")
                           ? std::strtod(record->args.at("lora_dropout").c_str(), nullptr)
                           : loraDropout;
      config = peftConfigFor(weights, loraTargets, modules, dropout, record.has_value());
      return adapters;
    });
  checkOutput(args, "output");
  if (layout == "hf")
    config = onFile(graphFile, [&] { return hubConfigFor(record, vocab, dtypeName, configFile); });
  std::map<std::string, std::string> metadata;
  if (layout != "graph")
    metadata["format"] = "pt"; // as transformers' and PEFT's save_pretrained write it
  onFile(out, [&] { rt::writeSafetensors(out, weights, dtype, metadata, "weights"); });
  int64_t count = 0;
  for (const auto &[name, t] : weights.tensors)
    count += rt::numElements(t.shape);
  std::printf("%s: %zu tensors, %lld values in %s", out.c_str(), weights.tensors.size(),
              (long long)count, dtypeName.c_str());
  if (merged > 0)
    std::printf(", %d LoRA adapters merged into their layers' weights", merged);
  std::printf("\n");
  if (config) {
    if (std::string why = rt::writeFileAtomically(configFile, *config); !why.empty())
      throw CliError(configFile, "cannot write the file: " + why);
    std::printf("%s: %s\n", configFile.c_str(),
                layout == "peft" ? "the adapters' config, for PEFT"
                                 : "the model's shape, for transformers");
  } else if (layout == "hf") {
    std::printf("%s\n", std::filesystem::exists(configFile)
                            ? (configFile + ": kept, it describes this model").c_str()
                            : "no config.json: the graph has no record of the zoo model that "
                              "built it (ampc model writes one)");
  }
  return 0;
}

} // namespace ampc::cli
