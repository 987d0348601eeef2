#include "compiler/Layers.h"

#include <cmath>

namespace ampc {

Tensor linear(GraphBuilder &b, Tensor x, int64_t outFeatures, llvm::StringRef name,
              bool bias, const Init &weights) {
  auto s = b.scope(name);
  Tensor w = b.param("w", {x.dim(-1), outFeatures}, weights);
  Tensor y = b.matmul(x, w);
  if (bias)
    y = b.add(y, b.param("b", {outFeatures}, Init::zeros()));
  return y;
}

Tensor conv2dLayer(GraphBuilder &b, Tensor x, int64_t outChannels, int64_t kernel,
                   llvm::StringRef name, int64_t stride, int64_t padding, bool bias) {
  auto s = b.scope(name);
  Tensor w = b.param("w", {outChannels, kernel, kernel, x.dim(-1)}, Init::kaimingNormal());
  Conv2dAttrs attrs;
  attrs.strides = {stride, stride};
  attrs.padding = {padding, padding};
  Tensor y = b.conv2d(x, w, attrs);
  if (bias)
    y = b.add(y, b.param("b", {outChannels}, Init::zeros()));
  return y;
}

Tensor batchNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name) {
  auto s = b.scope(name);
  int64_t c = x.dim(-1);
  Tensor scale = b.param("scale", {c}, Init::ones());
  Tensor bias = b.param("bias", {c}, Init::zeros());
  Tensor mean = b.param("running_mean", {c}, Init::zeros(), "f32", /*trainable=*/false);
  Tensor var = b.param("running_var", {c}, Init::ones(), "f32", /*trainable=*/false);
  return b.batchNorm(x, scale, bias, mean, var);
}

Tensor layerNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name, double epsilon) {
  auto s = b.scope(name);
  int64_t d = x.dim(-1);
  Tensor scale = b.param("scale", {d}, Init::ones());
  Tensor bias = b.param("bias", {d}, Init::zeros());
  return b.layerNorm(x, scale, bias, epsilon);
}

Tensor embeddingLayer(GraphBuilder &b, Tensor ids, int64_t vocab, int64_t dim,
                      llvm::StringRef name, Tensor *table) {
  auto s = b.scope(name);
  Tensor w = b.param("w", {vocab, dim}, Init::normal(0.02));
  if (table)
    *table = w;
  return b.embedding(ids, w);
}

Tensor multiHeadAttention(GraphBuilder &b, Tensor x, int64_t heads, llvm::StringRef name,
                          const AttentionOptions &options) {
  auto s = b.scope(name);
  int64_t batch = x.dim(0), seq = x.dim(1), hidden = x.dim(2), d = hidden / heads;
  if (d * heads != hidden)
    throw GraphError("attention '" + b.qualify("") + "': hidden size " +
                     std::to_string(hidden) + " is not a multiple of " +
                     std::to_string(heads) + " heads");
  // [batch, seq, hidden] -> [batch, seq, heads, d], the fused op's layout;
  // unfused, [batch, heads, seq, d] for the batched matmuls.
  bool fused = options.form == AttentionForm::Fused;
  if (options.causal && !fused)
    throw GraphError("attention '" + b.qualify("") +
                     "': causal attention is built as the fused op only");
  auto split = [&](Tensor t, llvm::StringRef which) {
    Tensor r = b.reshape(t, {batch, seq, heads, d}, (which + ".split").str());
    return fused ? r : b.transpose(r, {0, 2, 1, 3}, (which + ".heads").str());
  };
  Tensor q = split(linear(b, x, hidden, "q", true, options.weights), "q");
  Tensor k = split(linear(b, x, hidden, "k", true, options.weights), "k");
  Tensor v = split(linear(b, x, hidden, "v", true, options.weights), "v");
  Tensor ctx;
  if (fused) {
    ctx = b.attention(q, k, v, options.causal, std::nullopt, "context");
  } else {
    Tensor scores = b.matmul(q, k, false, true, "scores");
    scores = b.scale(scores, 1.0 / std::sqrt((double)d), 0.0, "scaled");
    Tensor probs = b.softmax(scores, -1, "probs");
    ctx = b.matmul(probs, v, false, false, "context");
    ctx = b.transpose(ctx, {0, 2, 1, 3}, "context.merge");
  }
  ctx = b.reshape(ctx, {batch, seq, hidden}, "context.flat");
  return linear(b, ctx, hidden, "out", true, options.outWeights);
}

} // namespace ampc
