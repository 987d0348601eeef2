// bert: a BERT encoder (post-norm layers of attention and a GELU feed-forward
// block) with a masked-LM head tied to the word embeddings.
#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {

mlir::OwningOpRef<mlir::ModuleOp> buildBert(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t layers = a.getInt("layers"), hidden = a.getInt("hidden"),
          heads = a.getInt("heads"), seq = a.getInt("seq"), vocab = a.getInt("vocab"),
          batch = a.getInt("batch");
  const std::string &attention = a.get("attention");
  if (attention != "fused" && attention != "unfused")
    throw GraphError("bert: attention must be fused or unfused, got '" + attention + "'");
  AttentionOptions attentionOptions;
  attentionOptions.form = attention == "fused" ? AttentionForm::Fused : AttentionForm::Unfused;
  GraphBuilder b(ctx, "bert");
  Tensor ids = b.input("ids", {batch, seq}, "i64");
  Tensor labels = b.input("labels", {batch, seq}, "i64");
  Tensor h;
  Tensor wordTable;
  {
    auto s = b.scope("embeddings");
    Tensor words = embeddingLayer(b, ids, vocab, hidden, "word", &wordTable);
    Tensor positions = b.param("position.w", {seq, hidden}, Init::normal(0.02));
    h = b.add(words, positions, "sum");
    h = layerNormLayer(b, h, "norm");
  }
  for (int64_t i = 0; i < layers; ++i) {
    auto s = b.scope("encoder.layer" + std::to_string(i));
    Tensor attn = multiHeadAttention(b, h, heads, "attn", attentionOptions);
    h = layerNormLayer(b, b.add(h, attn, "attn.residual"), "attn.norm");
    Tensor ffn = b.gelu(linear(b, h, 4 * hidden, "ffn.fc1"), false, "ffn.gelu");
    ffn = linear(b, ffn, hidden, "ffn.fc2");
    h = layerNormLayer(b, b.add(h, ffn, "ffn.residual"), "ffn.norm");
  }
  {
    auto s = b.scope("mlm");
    h = b.gelu(linear(b, h, hidden, "transform"), false, "gelu");
    h = layerNormLayer(b, h, "norm");
    Tensor logits = b.matmul(h, wordTable, false, true, "decoder");
    logits = b.add(logits, b.param("decoder.b", {vocab}, Init::zeros()), "logits");
    b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
  }
  return b.finish();
}

} // namespace ampc
