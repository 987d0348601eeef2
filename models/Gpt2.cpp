// gpt2: a GPT-2 decoder (docs/gpt.md): learned positions, pre-norm layers of
// causal attention and a tanh-GELU feed-forward block, a final layer norm,
// and logits from the token table (input and output embeddings tied).
// Initialised as GPT-2 is: normal(0, 0.02) weights, zero biases, and the
// residual projections (attention output, fc2) at 0.02 / sqrt(2 * layers).
#include <cmath>

#include "compiler/Layers.h"
#include "models/Models.h"
#include "models/LoraArgs.h"
#include "models/TokenGraphIO.h"

namespace ampc {

mlir::OwningOpRef<mlir::ModuleOp> buildGpt2(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t layers = a.getInt("layers"), hidden = a.getInt("hidden"),
          heads = a.getInt("heads"), seq = a.getInt("seq"), vocab = a.getInt("vocab"),
          batch = a.getInt("batch");
  if (hidden % heads != 0)
    throw GraphError("gpt2: hidden " + std::to_string(hidden) + " is not a multiple of " +
                     std::to_string(heads) + " heads");
  const Init weights = Init::normal(0.02);
  const Init residual = Init::normal(0.02 / std::sqrt(2.0 * (double)layers));
  const LoraSpec lora = loraSpec(a, {"q", "k", "v", "out", "fc1", "fc2"});
  GraphBuilder b(ctx, "gpt2");
  TokenGraphIO io(b, a, batch, seq);
  Tensor tokenTable, h;
  {
    auto s = b.scope("embeddings");
    Tensor tokens = embeddingLayer(b, io.ids(), vocab, hidden, "token", &tokenTable);
    Tensor positions = io.atPositions(b.param("position.w", {seq, hidden}, weights), "position");
    h = b.add(tokens, positions, "sum");
  }
  AttentionOptions attn;
  attn.form = AttentionForm::Fused;
  attn.causal = true;
  attn.weights = weights;
  attn.outWeights = residual;
  attn.cache = io.cache();
  attn.lora = &lora;
  for (int64_t i = 0; i < layers; ++i) {
    auto s = b.scope("layer" + std::to_string(i));
    Tensor a1 = multiHeadAttention(b, layerNormLayer(b, h, "attn.norm", 1e-5), heads, "attn", attn);
    h = b.add(h, a1, "attn.residual");
    Tensor f = layerNormLayer(b, h, "mlp.norm", 1e-5);
    {
      auto m = b.scope("mlp");
      f = linear(b, f, 4 * hidden, "fc1", true, weights, &lora);
      f = linear(b, b.gelu(f, /*approximate=*/true, "gelu"), hidden, "fc2", true, residual, &lora);
    }
    h = b.add(h, f, "mlp.residual");
  }
  {
    auto s = b.scope("head");
    h = layerNormLayer(b, h, "norm", 1e-5);
    io.finish(b.matmul(h, tokenTable, false, true, "logits"));
  }
  mlir::OwningOpRef<mlir::ModuleOp> module = b.finish();
  freezeAllButAdapters(*module, lora);
  return module;
}

} // namespace ampc
