// Hugging Face names to the zoo's: see HuggingFaceNames.h.
#include "runtime/driver/HuggingFaceNames.h"
#include "runtime/core/LoraNames.h"

#include <cstring>
#include <optional>
#include <regex>
#include <set>

namespace ampc::rt {
namespace {

/// A GPT-2 block's tensors (after `h.N.`) and the zoo's (after `layerN.`);
/// c_attn, split into q, k and v, is apart.
const std::map<std::string, std::string> kGptLayerNames = {
    {"ln_1.weight", "attn.norm.scale"},    {"ln_1.bias", "attn.norm.bias"},
    {"attn.c_proj.weight", "attn.out.w"},  {"attn.c_proj.bias", "attn.out.b"},
    {"ln_2.weight", "mlp.norm.scale"},     {"ln_2.bias", "mlp.norm.bias"},
    {"mlp.c_fc.weight", "mlp.fc1.w"},      {"mlp.c_fc.bias", "mlp.fc1.b"},
    {"mlp.c_proj.weight", "mlp.fc2.w"},    {"mlp.c_proj.bias", "mlp.fc2.b"}};
/// A LLaMA (or Qwen 2) layer's tensors (after `layers.N.`) and the zoo's.
const std::map<std::string, std::string> kLlamaLayerNames = {
    {"self_attn.q_proj.weight", "attn.q.w"},   {"self_attn.k_proj.weight", "attn.k.w"},
    {"self_attn.v_proj.weight", "attn.v.w"},   {"self_attn.o_proj.weight", "attn.out.w"},
    {"mlp.gate_proj.weight", "mlp.gate.w"},    {"mlp.up_proj.weight", "mlp.up.w"},
    {"mlp.down_proj.weight", "mlp.down.w"},    {"input_layernorm.weight", "attn.norm.scale"},
    {"post_attention_layernorm.weight", "mlp.norm.scale"},
    {"self_attn.q_proj.bias", "attn.q.b"},     {"self_attn.k_proj.bias", "attn.k.b"},
    {"self_attn.v_proj.bias", "attn.v.b"}}; // Qwen 2's

/// The same pairs the other way round.
std::map<std::string, std::string> inverted(const std::map<std::string, std::string> &names) {
  std::map<std::string, std::string> out;
  for (const auto &[from, to] : names)
    out[to] = from;
  return out;
}

/// One source tensor's values, row-major, and its shape.
struct Matrix {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

Matrix readF32(const Safetensors &file, const Safetensors::Tensor &t) {
  if (!isStoredFloat(t.dtype))
    throw RuntimeError(file.path + ": a tensor of dtype " + dtypeName(t.dtype) +
                       " where a float weight was expected");
  return {t.shape, valuesAsF32(file, t)};
}

Matrix transposed(const Matrix &m) {
  if (m.shape.size() != 2)
    return m;
  int64_t rows = m.shape[0], cols = m.shape[1];
  Matrix t{{cols, rows}, std::vector<float>(m.values.size())};
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      t.values[c * rows + r] = m.values[r * cols + c];
  return t;
}

/// Part `k` of `parts` equal parts along the last dimension (c_attn's q, k, v).
Matrix part(const Matrix &m, int k, int parts) {
  int64_t cols = m.shape.back(), width = cols / parts, rows = (int64_t)m.values.size() / cols;
  Matrix p{m.shape, {}};
  p.shape.back() = width;
  for (int64_t r = 0; r < rows; ++r)
    p.values.insert(p.values.end(), m.values.begin() + r * cols + k * width,
                    m.values.begin() + r * cols + (k + 1) * width);
  return p;
}

/// A table fitted to `shape` along dimension `axis` alone: with `pad`, zeros
/// appended (a padded vocabulary); with `cut`, the first entries kept
/// (positions). Any other difference is left for the loader's shape check
/// to name.
Matrix fitted(const Matrix &m, const std::vector<int64_t> &shape, int axis, bool pad, bool cut) {
  if (m.shape.size() != 2 || shape.size() != 2 || m.shape[1 - axis] != shape[1 - axis] ||
      (shape[axis] > m.shape[axis] && !pad) || (shape[axis] < m.shape[axis] && !cut))
    return m;
  Matrix f{shape, std::vector<float>(numElements(shape), 0.0f)};
  int64_t rows = std::min(m.shape[0], shape[0]), cols = std::min(m.shape[1], shape[1]);
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(&f.values[r * shape[1]], &m.values[r * m.shape[1]], cols * sizeof(float));
  return f;
}

/// The tensors of `out` as one f32 safetensors file, each moved into the
/// file's bytes and freed: a model's values are held once, not twice.
Safetensors packed(std::map<std::string, Matrix> &out, const std::string &path) {
  Safetensors file;
  file.path = path;
  size_t total = 0;
  for (const auto &[name, m] : out)
    total += m.values.size() * sizeof(float);
  file.data.reserve(total);
  for (auto &[name, m] : out) {
    size_t bytes = m.values.size() * sizeof(float);
    file.tensors[name] = {DType::F32, m.shape, file.data.size(), bytes};
    file.data.append(reinterpret_cast<const char *>(m.values.data()), bytes);
    std::vector<float>().swap(m.values);
  }
  return file;
}

/// Columns [a | b | c] of three matrices of equal rows (GPT-2's c_attn), or
/// the three vectors end to end (its bias).
Matrix joined(const Matrix &a, const Matrix &b, const Matrix &c) {
  int64_t rows = a.shape.size() == 2 ? a.shape[0] : 1;
  Matrix j{a.shape, {}};
  j.shape.back() = a.shape.back() + b.shape.back() + c.shape.back();
  for (int64_t r = 0; r < rows; ++r)
    for (const Matrix *m : {&a, &b, &c}) {
      int64_t cols = m->shape.back();
      j.values.insert(j.values.end(), m->values.begin() + r * cols,
                      m->values.begin() + (r + 1) * cols);
    }
  return j;
}

/// The first `rows` rows of a table (0: all of it).
Matrix firstRows(Matrix m, int64_t rows) {
  if (rows <= 0 || m.shape.size() != 2 || rows >= m.shape[0])
    return m;
  m.values.resize(rows * m.shape[1]);
  m.shape[0] = rows;
  return m;
}

} // namespace

Safetensors toHuggingFace(const Safetensors &ours, int64_t vocab) {
  std::map<std::string, Matrix> in, out;
  for (const auto &[name, tensor] : ours.tensors)
    in[name] = readF32(ours, tensor);
  bool gpt2 = in.count("embeddings.position.w"), llama = in.count("layer0.mlp.gate.w");
  if (!gpt2 && !llama)
    throw RuntimeError(ours.path + ": neither the zoo's gpt2 (embeddings.position.w) nor its "
                                   "llama (layer0.mlp.gate.w): --layout hf writes those two (an "
                                   "imported model's names are already its own: --layout "
                                   "graph, with --merge-lora for LoRA adapters)");
  static const std::regex layer(R"(layer(\d+)\.(.*))");
  static const std::map<std::string, std::string> gptNames = inverted(kGptLayerNames),
                                                  llamaNames = inverted(kLlamaLayerNames);
  std::string prefix = gpt2 ? "transformer." : "model.";
  for (auto &[name, m] : in) {
    std::smatch match;
    std::string theirs;
    if (name == "embeddings.token.w") {
      out[prefix + (gpt2 ? "wte.weight" : "embed_tokens.weight")] = firstRows(m, vocab);
      continue;
    } else if (name == "embeddings.position.w" && gpt2) {
      theirs = "transformer.wpe.weight";
    } else if (name == "head.norm.scale") {
      theirs = prefix + (gpt2 ? "ln_f.weight" : "norm.weight");
    } else if (name == "head.norm.bias" && gpt2) {
      theirs = "transformer.ln_f.bias";
    } else if (name == "head.logits.w" && llama) {
      out["lm_head.weight"] = firstRows(transposed(m), vocab);
      continue;
    } else if (std::regex_match(name, match, layer)) {
      std::string block = match[1].str(), rest = match[2].str();
      if (gpt2 && (rest == "attn.q.w" || rest == "attn.q.b")) {
        std::string kind = rest.substr(rest.size() - 1), head = "layer" + block + ".attn.";
        if (in.count(head + "k." + kind) && in.count(head + "v." + kind)) {
          out["transformer.h." + block + ".attn.c_attn." + (kind == "w" ? "weight" : "bias")] =
              joined(m, in[head + "k." + kind], in[head + "v." + kind]);
          continue;
        }
      } else if (gpt2 && (rest == "attn.k.w" || rest == "attn.k.b" || rest == "attn.v.w" ||
                          rest == "attn.v.b")) {
        continue; // joined with q's
      }
      const auto &names = gpt2 ? gptNames : llamaNames;
      if (auto it = names.find(rest); it != names.end()) {
        bool linear = llama && m.shape.size() == 2; // LLaMA's Linear weights are [out, in]
        out[prefix + (gpt2 ? "h." : "layers.") + block + "." + it->second] =
            linear ? transposed(m) : m;
        continue;
      }
    }
    if (theirs.empty())
      throw RuntimeError(ours.path + ": param '" + name + "' has no place in Hugging Face's " +
                         (gpt2 ? "GPT2LMHeadModel" : "LlamaForCausalLM"));
    out[theirs] = std::move(m);
  }
  return packed(out, ours.path);
}

Safetensors toPeftAdapters(const Safetensors &ours, std::set<std::string> &modules,
                           bool asNamed) {
  static const std::regex adapter(R"(layer(\d+)\.(.*)\.lora_([ab]))");
  static const std::map<std::string, std::string> llamaNames = inverted(kLlamaLayerNames);
  std::map<std::string, Matrix> out;
  for (const auto &[name, tensor] : ours.tensors) {
    if (asNamed && isLoraAdapter(name)) {
      std::string layer = loraLayer(name);
      modules.insert(layer.substr(layer.rfind('.') + 1));
      out["base_model.model." + layer + ".lora_" + (name.back() == 'a' ? "A" : "B") +
          ".weight"] = transposed(readF32(ours, tensor));
      continue;
    }
    std::smatch m;
    if (!std::regex_match(name, m, adapter))
      continue;
    auto it = llamaNames.find(m[2].str() + ".w");
    if (it == llamaNames.end() || ours.tensors.count("embeddings.position.w"))
      throw RuntimeError(ours.path + ": adapter '" + name + "' is not on a layer of the zoo's "
                         "llama; --layout peft writes LlamaForCausalLM's adapters (GPT-2's are "
                         "on c_attn: write --layout hf, which merges them)");
    std::string module = it->second.substr(0, it->second.size() - std::strlen(".weight"));
    modules.insert(module.substr(module.rfind('.') + 1));
    // PEFT's lora_A and lora_B are Linear layers: [rank, in] and [out, rank].
    out["base_model.model.model.layers." + m[1].str() + "." + module + ".lora_" +
        (m[3] == "a" ? "A" : "B") + ".weight"] = transposed(readF32(ours, tensor));
  }
  if (out.empty())
    throw RuntimeError(ours.path + ": no LoRA adapters (a graph built with --set lora=R has "
                                   "them)");
  return packed(out, ours.path);
}

Safetensors fromHuggingFace(const Safetensors &hf, const Plan &plan) {
  std::map<std::string, Matrix> out;
  static const std::regex gptLayer(R"(h\.(\d+)\.(.*))"), llamaLayer(R"(layers\.(\d+)\.(.*))"),
      buffers(R"(.*\.(attn\.bias|attn\.masked_bias|rotary_emb\.inv_freq))");
  bool llama = false;
  std::map<std::string, std::string> source; // ours -> the checkpoint's name
  std::optional<Matrix> untiedHead;          // LLaMA's lm_head where the graph ties it
  for (const auto &[full, tensor] : hf.tensors) {
    std::string name = full;
    for (const char *prefix : {"base_model.model.", "transformer.", "model."}) // PEFT's first
      if (name.rfind(prefix, 0) == 0)
        name = name.substr(std::strlen(prefix));
    std::smatch m;
    auto read = [&] { return readF32(hf, tensor); };
    bool mapped = false;
    auto put = [&](const std::string &ours, Matrix value) {
      out[ours] = std::move(value);
      source[ours] = full;
      mapped = true;
    };
    if (std::regex_match(name, m, gptLayer)) {
      std::string layer = "layer" + m[1].str() + ".", rest = m[2].str();
      if (rest == "attn.c_attn.weight" || rest == "attn.c_attn.bias") {
        Matrix qkv = read();
        const char *suffix = rest.back() == 't' ? ".w" : ".b";
        for (int k = 0; k < 3; ++k)
          put(layer + "attn." + "qkv"[k] + suffix, part(qkv, k, 3));
      } else if (auto it = kGptLayerNames.find(rest); it != kGptLayerNames.end()) {
        put(layer + it->second, read());
      }
    } else if (std::regex_match(name, m, llamaLayer)) {
      llama = true;
      static const std::regex adapter(R"((.*)\.lora_([AB])\.weight)");
      std::smatch a;
      std::string rest = m[2].str();
      bool lora = std::regex_match(rest, a, adapter); // PEFT's [rank, in] and [out, rank]
      auto it = kLlamaLayerNames.find(lora ? a[1].str() + ".weight" : rest);
      if (it != kLlamaLayerNames.end()) {
        std::string ours = "layer" + m[1].str() + "." + it->second; // norms stay 1-D
        if (lora)
          ours = ours.substr(0, ours.size() - 2) + (a[2] == "A" ? ".lora_a" : ".lora_b");
        put(ours, transposed(read()));
      }
    } else if (name == "wte.weight" || name == "embed_tokens.weight") {
      put("embeddings.token.w", read());
    } else if (name == "wpe.weight") {
      put("embeddings.position.w", read());
    } else if (name == "ln_f.weight" || name == "norm.weight") {
      put("head.norm.scale", read());
    } else if (name == "ln_f.bias") {
      put("head.norm.bias", read());
    } else if (name == "lm_head.weight") {
      mapped = true; // GPT-2's is its token table (tied): read only where the graph has one
      if (plan.find("head.logits.w") >= 0)
        put("head.logits.w", transposed(read()));
      else
        untiedHead = read(); // checked against the token table below
    }
    // A weight neither model has would be dropped silently: refused
    // instead. The causal-mask and rotary buffers are recomputed by the
    // graph.
    if (!mapped && !std::regex_match(name, buffers))
      throw RuntimeError(hf.path + ": tensor '" + full +
                         "' is no weight of Hugging Face's GPT-2 or LLaMA that --init-layout hf "
                         "maps to the zoo's gpt2 and llama (docs/gpt.md, \"Pretrained weights\")");
  }
  bool graphTies = plan.find("head.logits.w") < 0;
  if (llama && !graphTies && !out.count("head.logits.w") && out.count("embeddings.token.w"))
    out["head.logits.w"] = transposed(out["embeddings.token.w"]); // tie_word_embeddings
  if (llama && graphTies && untiedHead &&
      (!out.count("embeddings.token.w") ||
       untiedHead->values != out["embeddings.token.w"].values))
    throw RuntimeError(hf.path + ": lm_head.weight is not the token table, but the graph ties "
                                 "its output projection to it: build it with --set tie=0");
  for (const auto &[ours, theirs] : source)
    if (plan.find(ours) < 0)
      throw RuntimeError(
          hf.path + ": tensor '" + theirs + "' has no place in the graph (no param '" + ours +
          "')" +
          (ours.find(".attn.") != std::string::npos && ours.back() == 'b'
               ? ": build it with --set qkv_bias=1 (Qwen 2's q, k and v biases)"
               : ""));
  struct Fit {
    const char *table;
    int axis;
    bool pad, cut;
  };
  for (Fit fit : {Fit{"embeddings.token.w", 0, true, false},
                  Fit{"embeddings.position.w", 0, false, true},
                  Fit{"head.logits.w", 1, true, false}})
    if (int id = plan.find(fit.table); id >= 0 && out.count(fit.table))
      out[fit.table] =
          fitted(out[fit.table], plan.buffers[id].shape, fit.axis, fit.pad, fit.cut);
  return packed(out, hf.path);
}

} // namespace ampc::rt
