#include <cmath>
#include "models/Models.h"
#include "models/LoraArgs.h"

#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "ops/GraphOps.h"

namespace ampc {

const std::string &ModelArgs::get(const std::string &key) const {
  auto it = values_.find(key);
  if (it == values_.end())
    throw GraphError("parameter '" + key + "' is not given");
  return it->second;
}

int64_t ModelArgs::getInt(const std::string &key) const {
  const std::string &text = get(key);
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || v <= 0)
    throw GraphError("parameter '" + key + "' must be a positive integer, got '" + text + "'");
  return v;
}

double ModelArgs::getNumber(const std::string &key) const {
  const std::string &text = get(key);
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used != text.size() || !(v > 0) || !std::isfinite(v))
    throw GraphError("parameter '" + key + "' must be a positive number, got '" + text + "'");
  return v;
}

bool ModelArgs::getFlag(const std::string &key) const {
  const std::string &text = get(key);
  if (text != "0" && text != "1")
    throw GraphError("parameter '" + key + "' must be 0 or 1, got '" + text + "'");
  return text == "1";
}

namespace {

/// A decoder's params and the LoRA ones (docs/training.md, "LoRA").
std::vector<ModelParam> withLora(std::vector<ModelParam> params, const std::string &targets) {
  for (ModelParam &p : loraParams(targets))
    params.push_back(std::move(p));
  return params;
}

} // namespace

const std::vector<ModelInfo> &modelRegistry() {
  static const std::vector<ModelInfo> models = {
      {"simplenet", "3 Linear layers with ReLU and MSE loss (the Paddle AMP tutorial)",
       {{"batch", "512", "batch size"}, {"hidden", "4096", "width of every layer"}},
       buildSimpleNet},
      {"mlp", "784-512-512-10 perceptron with cross entropy",
       {{"batch", "64", "batch size"}, {"hidden", "512", "width of the hidden layers"}},
       buildMlp},
      {"mnist_cnn", "NHWC conv5x5-16, BN, ReLU, maxpool, conv5x5-64, BN, ReLU, maxpool, fc64, fc10",
       {{"batch", "64", "batch size"}},
       buildMnistCnn},
      {"resnet", "ResNet 18 or 50, NHWC",
       {{"depth", "50", "18 or 50"},
        {"batch", "32", "batch size"},
        {"image", "224", "image height and width"},
        {"channels", "8", "input channels (RGB zero-padded to 8 for tensor cores)"},
        {"classes", "1000", "number of classes"}},
       buildResNet},
      {"bert", "BERT encoder with a masked-LM head (defaults: BERT-base)",
       {{"layers", "12", "encoder layers"},
        {"hidden", "768", "hidden size"},
        {"heads", "12", "attention heads"},
        {"seq", "128", "sequence length"},
        {"vocab", "30528", "vocabulary size (30522 padded to a multiple of 8)"},
        {"batch", "8", "batch size"},
        {"attention", "unfused", "fused (one attention op) or unfused (matmul, softmax, matmul)"}},
       buildBert},
      {"gpt2", "GPT-2 decoder with causal attention and tied embeddings (defaults: 124M)",
       withLora({{"layers", "12", "decoder layers"},
        {"hidden", "768", "hidden size"},
        {"heads", "12", "attention heads"},
        {"seq", "1024", "sequence length (the context window)"},
        {"vocab", "50304", "vocabulary size (GPT-2's 50257 padded to a multiple of 64; 256 "
                           "for bytes)"},
        {"batch", "16", "batch size"},
        {"decode", "0", "1: one token at a time against a KV cache of seq, for ampc sample"}},
                "q,v"),
       buildGpt2},
      {"llama", "LLaMA-style decoder: RMS norm, rotary positions, grouped-query causal "
                "attention, SwiGLU (defaults: 12 layers, 768 wide, 125M)",
       withLora({{"layers", "12", "decoder layers"},
        {"hidden", "768", "hidden size"},
        {"heads", "12", "query heads"},
        {"kv_heads", "4", "key and value heads (grouped-query attention; = heads for none)"},
        {"ffn", "auto", "feed-forward width (auto: 8/3 of hidden rounded up to 256)"},
        {"seq", "1024", "sequence length (the context window)"},
        {"vocab", "32000", "vocabulary size (LLaMA's 32000; 256 for byte-level tokens)"},
        {"rope_theta", "10000", "rotary embeddings' base (LLaMA 3: 500000)"},
        {"rope_scaling", "none",
         "none, or llama3:FACTOR,LOW,HIGH,ORIGINAL (Llama 3.1 and 3.2: llama3:8,1,4,8192 and "
         "llama3:32,1,4,8192)"},
        {"norm_eps", "1e-5", "RMS norms' epsilon (Qwen 2: 1e-6)"},
        {"qkv_bias", "0", "1: the q, k and v projections have biases (Qwen 2)"},
        {"tie", "0", "1: the output projection is the token table (Qwen 2.5 0.5B, Llama 3.2)"},
        {"batch", "16", "batch size"},
        {"decode", "0", "1: one token at a time against a KV cache of seq, for ampc sample"}},
                "q,v"),
       buildLlama},
      {"attention", "scaled dot-product attention alone, forward and backward, to measure it "
                    "(defaults: 16k tokens, 2048 wide)",
       {{"batch", "16", "batch size"},
        {"seq", "1024", "sequence length"},
        {"heads", "16", "heads"},
        {"head_dim", "128", "head size"},
        {"causal", "false", "true or false (true: fused only)"},
        {"attention", "fused", "fused (one attention op) or unfused (matmul, softmax, matmul)"}},
       buildAttentionCore},
  };
  return models;
}

mlir::OwningOpRef<mlir::ModuleOp> buildModel(mlir::MLIRContext &ctx, const std::string &name,
                                             const std::map<std::string, std::string> &sets) {
  for (const ModelInfo &m : modelRegistry()) {
    if (m.name != name)
      continue;
    std::map<std::string, std::string> values;
    for (const ModelParam &p : m.params)
      values[p.key] = p.defaultValue;
    for (const auto &[key, value] : sets) {
      if (!values.count(key)) {
        std::string known;
        for (const ModelParam &p : m.params)
          known += (known.empty() ? "" : ", ") + p.key;
        throw GraphError("model '" + name + "' has no parameter '" + key +
                         "'; it takes: " + known);
      }
      values[key] = value;
    }
    mlir::OwningOpRef<mlir::ModuleOp> module = m.build(ctx, ModelArgs(values));
    mlir::Builder b(&ctx);
    llvm::SmallVector<mlir::NamedAttribute> args;
    for (const auto &[key, value] : values)
      args.push_back(b.getNamedAttr(key, b.getStringAttr(value)));
    llvm::cast<graph::GraphOp>(theGraph(*module))
        .setModelAttr(b.getDictionaryAttr({b.getNamedAttr("name", b.getStringAttr(name)),
                                      b.getNamedAttr("args", b.getDictionaryAttr(args))}));
    return module;
  }
  std::string known;
  for (const ModelInfo &m : modelRegistry())
    known += (known.empty() ? "" : ", ") + m.name;
  throw GraphError("unknown model '" + name + "'; the models are: " + known);
}

std::optional<ModelRecord> modelRecordOf(mlir::ModuleOp module) {
  auto model = llvm::cast<graph::GraphOp>(theGraph(module)).getModel();
  if (!model)
    return std::nullopt;
  ModelRecord record{model->getAs<mlir::StringAttr>("name").str(), {}};
  for (mlir::NamedAttribute arg : model->getAs<mlir::DictionaryAttr>("args"))
    record.args[arg.getName().str()] = llvm::cast<mlir::StringAttr>(arg.getValue()).str();
  return record;
}

} // namespace ampc
