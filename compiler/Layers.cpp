#include "compiler/Layers.h"
#include "runtime/core/LoraNames.h"

#include <cmath>

namespace ampc {

Tensor linear(GraphBuilder &b, Tensor x, int64_t outFeatures, llvm::StringRef name,
              bool bias, const Init &weights, const LoraSpec *lora) {
  auto s = b.scope(name);
  int64_t in = x.dim(-1);
  Tensor w = b.param("w", {in, outFeatures}, weights);
  Tensor y = b.matmul(x, w);
  if (bias)
    y = b.add(y, b.param("b", {outFeatures}, Init::zeros()));
  if (lora && lora->adapts(name)) { // after the bias, as PEFT adds it to the layer's output
    double bound = 1.0 / std::sqrt((double)in);
    Tensor loraA = b.param("lora_a", {in, lora->rank}, Init::uniform(-bound, bound));
    Tensor loraB = b.param("lora_b", {lora->rank, outFeatures}, Init::zeros());
    Tensor in = x;
    if (lora->dropout > 0) { // each adapter its own stream: the seed from its name
      in = b.dropout(x, lora->dropout, rt::loraDropoutSeed(b.qualify("lora_dropout")),
                     "lora_dropout");
    }
    Tensor up = b.matmul(b.matmul(in, loraA, false, false, "lora_down"), loraB, false, false,
                         "lora_up");
    y = b.add(y, b.scale(up, lora->alpha / (double)lora->rank, 0.0, "lora_scale"), "lora_add");
  }
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

Tensor rmsNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name, double epsilon) {
  auto s = b.scope(name);
  Tensor scale = b.param("scale", {x.dim(-1)}, Init::ones());
  Tensor meanSquare = b.reduceMean(b.unary("square", x), {-1}, /*keepdims=*/true, "mean_square");
  Tensor inverse = b.unary("rsqrt", b.scale(meanSquare, 1.0, epsilon, "plus_eps"), "inverse_rms");
  return b.mul(b.mul(x, inverse, "normalized"), scale, "scaled");
}

RotaryTables rotaryTables(GraphBuilder &b, int64_t seq, int64_t headDim, double theta,
                          llvm::StringRef name, std::optional<RopeScaling> scaling) {
  auto s = b.scope(name);
  if (headDim % 2 != 0)
    throw GraphError("rotary embedding '" + b.qualify("") + "': head_dim " +
                     std::to_string(headDim) + " is odd");
  int64_t d = headDim, half = d / 2;
  std::vector<double> frequency(half), cosines(seq * d), sines(seq * d);
  for (int64_t i = 0; i < half; ++i) {
    frequency[i] = std::pow(theta, -2.0 * (double)i / (double)d);
    if (!scaling)
      continue;
    double wavelength = 2 * M_PI / frequency[i], f = frequency[i];
    double low = scaling->originalSeq / scaling->lowFreqFactor,
           high = scaling->originalSeq / scaling->highFreqFactor;
    if (wavelength > low) {
      frequency[i] = f / scaling->factor;
    } else if (wavelength >= high) {
      double smooth = (scaling->originalSeq / wavelength - scaling->lowFreqFactor) /
                      (scaling->highFreqFactor - scaling->lowFreqFactor);
      frequency[i] = (1 - smooth) * f / scaling->factor + smooth * f;
    }
  }
  for (int64_t t = 0; t < seq; ++t)
    for (int64_t i = 0; i < d; ++i) {
      double angle = (double)t * frequency[i % half];
      cosines[t * d + i] = std::cos(angle);
      sines[t * d + i] = std::sin(angle);
    }
  return {b.constant({seq, 1, d}, cosines, "f32", "cos"),
          b.constant({seq, 1, d}, sines, "f32", "sin")};
}

Tensor rotaryEmbedding(GraphBuilder &b, Tensor x, const RotaryTables &tables,
                       llvm::StringRef name) {
  auto s = b.scope(name);
  int64_t d = x.dim(3), half = d / 2;
  if (tables.cos.dim(0) != x.dim(1) || tables.cos.dim(2) != d)
    throw GraphError("rotary embedding '" + b.qualify("") + "': tables for seq " +
                     std::to_string(tables.cos.dim(0)) + " and head_dim " +
                     std::to_string(tables.cos.dim(2)) + ", not " + std::to_string(x.dim(1)) +
                     " and " + std::to_string(d));
  Tensor x1 = b.slice(x, {3}, {0}, {half}, "first_half");
  Tensor x2 = b.slice(x, {3}, {half}, {d}, "second_half");
  Tensor rotated = b.concat({b.unary("neg", x2, "negated"), x1}, 3, "rotated");
  return b.add(b.mul(x, tables.cos, "times_cos"), b.mul(rotated, tables.sin, "times_sin"),
               "sum");
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
  int64_t kvHeads = options.kvHeads ? options.kvHeads : heads;
  if (kvHeads <= 0 || heads % kvHeads != 0)
    throw GraphError("attention '" + b.qualify("") + "': " + std::to_string(heads) +
                     " heads are not a multiple of " + std::to_string(kvHeads) + " kv heads");
  const std::optional<AttentionCache> &cache = options.cache;
  if (cache && (!fused || seq != 1))
    throw GraphError("attention '" + b.qualify("") +
                     "': a cache is read one position at a time by the fused op");
  auto project = [&](llvm::StringRef which, int64_t n) {
    Tensor t = linear(b, x, n * d, which, options.qkvBias, options.weights, options.lora);
    t = b.reshape(t, {batch, seq, n, d}, (which + ".split").str());
    if (options.rotary && which != "v")
      t = rotaryEmbedding(b, t, *options.rotary, (which + ".rotary").str());
    if (cache && which != "q") { // the earlier positions, then this one
      cache->newKeysValues->push_back(t);
      Tensor earlier = b.input((which + "_cache").str(), {batch, cache->length, n, d}, "f32");
      t = b.concat({earlier, t}, 1, (which + ".all").str());
    }
    int64_t rows = t.dim(1);
    if (n != heads) { // each kv head repeated for its group of query heads
      t = b.reshape(t, {batch, rows, n, 1, d}, (which + ".groups").str());
      std::vector<Tensor> copies(heads / n, t);
      t = b.reshape(b.concat(copies, 3, (which + ".repeat").str()), {batch, rows, heads, d},
                    (which + ".repeated").str());
    }
    return fused ? t : b.transpose(t, {0, 2, 1, 3}, (which + ".heads").str());
  };
  Tensor q = project("q", heads), k = project("k", kvHeads), v = project("v", kvHeads);
  Tensor ctx;
  if (fused) {
    ctx = cache ? b.attention(q, k, v, false, std::nullopt, "context", 0.0, 0, cache->mask)
                : b.attention(q, k, v, options.causal, std::nullopt, "context");
  } else {
    Tensor scores = b.matmul(q, k, false, true, "scores");
    scores = b.scale(scores, 1.0 / std::sqrt((double)d), 0.0, "scaled");
    Tensor probs = b.softmax(scores, -1, "probs");
    ctx = b.matmul(probs, v, false, false, "context");
    ctx = b.transpose(ctx, {0, 2, 1, 3}, "context.merge");
  }
  ctx = b.reshape(ctx, {batch, seq, hidden}, "context.flat");
  return linear(b, ctx, hidden, "out", options.outBias, options.outWeights, options.lora);
}

} // namespace ampc
