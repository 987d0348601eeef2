// llama: a LLaMA-style decoder (docs/gpt.md, "LLaMA-style models"): no
// position table but rotary embeddings of q and k, pre-norm layers with RMS
// norm, causal grouped-query attention (biases on q, k and v with
// qkv_bias, as Qwen 2's), a SwiGLU feed-forward block (down(silu(gate(x)) *
// up(x))), a final RMS norm and an output projection of its own, or the
// token table with tie. Initialised as Hugging Face's LlamaForCausalLM is:
// normal(0, 0.02) weights, zero biases, norm scales 1.
#include <cstdio>

#include "compiler/Layers.h"
#include "models/Models.h"
#include "models/LoraArgs.h"
#include "models/TokenGraphIO.h"

namespace ampc {

namespace {

/// `rope_scaling`: none, or llama3:FACTOR,LOW,HIGH,ORIGINAL (Llama 3.1's
/// factor, low_freq_factor, high_freq_factor and
/// original_max_position_embeddings).
std::optional<RopeScaling> ropeScaling(const std::string &text) {
  if (text == "none")
    return std::nullopt;
  RopeScaling s{};
  char end = 0;
  if (std::sscanf(text.c_str(), "llama3:%lf,%lf,%lf,%lf%c", &s.factor, &s.lowFreqFactor,
                  &s.highFreqFactor, &s.originalSeq, &end) != 4 ||
      !(s.factor > 0) || !(s.lowFreqFactor > 0) || !(s.highFreqFactor > s.lowFreqFactor) ||
      !(s.originalSeq > 0))
    throw GraphError("parameter 'rope_scaling' must be none or llama3:FACTOR,LOW,HIGH,ORIGINAL "
                     "with HIGH > LOW > 0 (Llama 3.1's: llama3:8,1,4,8192), got '" + text + "'");
  return s;
}

} // namespace

int64_t llamaFfnWidth(const ModelArgs &a) {
  if (a.get("ffn") == "auto") // 8/3 of hidden, rounded up to a multiple of 256
    return (8 * a.getInt("hidden") / 3 + 255) / 256 * 256;
  try {
    return a.getInt("ffn");
  } catch (const GraphError &) {
    throw GraphError("parameter 'ffn' must be a positive integer or auto, got '" + a.get("ffn") +
                     "'");
  }
}

mlir::OwningOpRef<mlir::ModuleOp> buildLlama(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t layers = a.getInt("layers"), hidden = a.getInt("hidden"),
          heads = a.getInt("heads"), kvHeads = a.getInt("kv_heads"), seq = a.getInt("seq"),
          vocab = a.getInt("vocab"), batch = a.getInt("batch"), ffn = llamaFfnWidth(a);
  double eps = a.getNumber("norm_eps"), theta = a.getNumber("rope_theta");
  bool tie = a.getFlag("tie");
  if (hidden % heads != 0 || (hidden / heads) % 2 != 0)
    throw GraphError("llama: hidden " + std::to_string(hidden) + " over " +
                     std::to_string(heads) + " heads is no even head size");
  if (heads % kvHeads != 0)
    throw GraphError("llama: heads " + std::to_string(heads) + " is not a multiple of kv_heads " +
                     std::to_string(kvHeads));
  const Init weights = Init::normal(0.02);
  const LoraSpec lora = loraSpec(a, {"q", "k", "v", "out", "gate", "up", "down"});
  GraphBuilder b(ctx, "llama");
  TokenGraphIO io(b, a, batch, seq);
  Tensor h, tokenTable;
  {
    auto s = b.scope("embeddings");
    h = embeddingLayer(b, io.ids(), vocab, hidden, "token", &tokenTable);
  }
  AttentionOptions attn;
  attn.form = AttentionForm::Fused;
  attn.causal = true;
  attn.weights = attn.outWeights = weights;
  attn.qkvBias = a.getFlag("qkv_bias");
  attn.outBias = false;
  attn.kvHeads = kvHeads;
  RotaryTables rotary = rotaryTables(b, seq, hidden / heads, theta, "rotary",
                                     ropeScaling(a.get("rope_scaling")));
  attn.rotary = RotaryTables{io.atPositions(rotary.cos, "rotary.cos"),
                             io.atPositions(rotary.sin, "rotary.sin")};
  attn.cache = io.cache();
  attn.lora = &lora;
  for (int64_t i = 0; i < layers; ++i) {
    auto s = b.scope("layer" + std::to_string(i));
    h = b.add(h, multiHeadAttention(b, rmsNormLayer(b, h, "attn.norm", eps), heads, "attn", attn),
              "attn.residual");
    Tensor x = rmsNormLayer(b, h, "mlp.norm", eps), down;
    {
      auto m = b.scope("mlp");
      Tensor gate = linear(b, x, ffn, "gate", false, weights, &lora);
      Tensor up = linear(b, x, ffn, "up", false, weights, &lora);
      Tensor silu = b.mul(gate, b.unary("sigmoid", gate, "sigmoid"), "silu");
      down = linear(b, b.mul(silu, up, "gated"), hidden, "down", false, weights, &lora);
    }
    h = b.add(h, down, "mlp.residual");
  }
  {
    auto s = b.scope("head");
    Tensor normed = rmsNormLayer(b, h, "norm", eps);
    io.finish(tie ? b.matmul(normed, tokenTable, false, true, "logits")
                  : linear(b, normed, vocab, "logits", false, weights));
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = b.finish();
  freezeAllButAdapters(*module, lora);
  return module;
}

} // namespace ampc
