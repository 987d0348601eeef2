// Layer helpers over the builder: each opens a name scope and creates its
// named parameters with initialisers (`fc1.w`, `fc1.b`, ...).
#ifndef AMPC_COMPILER_LAYERS_H
#define AMPC_COMPILER_LAYERS_H

#include <set>
#include <string>

#include "compiler/GraphBuilder.h"

namespace ampc {

/// Low-rank adapters (LoRA, as Hugging Face's PEFT adds them): a linear layer
/// named in `targets` computes x @ w + b + (x @ lora_a) @ lora_b * alpha /
/// rank, with lora_a [in, rank] uniform(±1/sqrt(in)) (PEFT's kaiming-uniform)
/// and lora_b [rank, out] zeros, so that the layer starts as it was; in
/// training, x reaches the adapter through dropout at `dropout` (PEFT's
/// lora_dropout) (docs/training.md, "LoRA").
struct LoraSpec {
  int64_t rank = 0;
  double alpha = 8, dropout = 0;
  std::set<std::string> targets; // the layers' local names: q, v, mlp's up...
  bool adapts(llvm::StringRef layer) const { return rank > 0 && targets.count(layer.str()); }
};

/// x @ w + b over the last dimension; w is [in, out] (xavier unless `weights`
/// says otherwise), b zeros; with a LoRA adapter where `lora` names the layer.
Tensor linear(GraphBuilder &b, Tensor x, int64_t outFeatures, llvm::StringRef name,
              bool bias = true, const Init &weights = Init::xavierUniform(),
              const LoraSpec *lora = nullptr);

/// 2-D convolution with a [Cout, KH, KW, Cin] (NHWC) filter, kaiming init.
Tensor conv2dLayer(GraphBuilder &b, Tensor x, int64_t outChannels, int64_t kernel,
                   llvm::StringRef name, int64_t stride = 1, int64_t padding = 0,
                   bool bias = false);

/// Batch norm over the last (channel) axis, with f32 scale/bias and f32
/// running statistics that are state, not trained.
Tensor batchNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name);

/// Layer norm over the last dimension.
Tensor layerNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name,
                      double epsilon = 1e-12);

/// RMS norm over the last dimension (LLaMA's): x / sqrt(mean(x^2) + epsilon)
/// times a learned `scale` (ones), no bias and no mean subtracted.
Tensor rmsNormLayer(GraphBuilder &b, Tensor x, llvm::StringRef name, double epsilon = 1e-5);

/// The cos and sin tables of rotary position embeddings (RoPE), [seq, 1,
/// head_dim] constants shared by every layer: angle(t, i) = t *
/// theta^(-2i/head_dim) for pair i, repeated in both halves of head_dim,
/// computed in f64 and rounded once to f32.
struct RotaryTables {
  Tensor cos, sin;
};
/// Llama 3.1's frequency scaling (`rope_scaling` of type "llama3"): a
/// frequency whose wavelength 2π/f exceeds originalSeq / lowFreqFactor is
/// divided by `factor`, one below originalSeq / highFreqFactor is kept, and
/// those between are blended linearly in originalSeq / wavelength.
struct RopeScaling {
  double factor, lowFreqFactor, highFreqFactor, originalSeq;
};
RotaryTables rotaryTables(GraphBuilder &b, int64_t seq, int64_t headDim, double theta,
                          llvm::StringRef name = "rotary",
                          std::optional<RopeScaling> scaling = std::nullopt);

/// RoPE of x [batch, seq, heads, head_dim] in the half-split form of LLaMA's
/// and Hugging Face's code: with x1, x2 the halves of head_dim, the result
/// is [x1 cos - x2 sin, x2 cos + x1 sin].
Tensor rotaryEmbedding(GraphBuilder &b, Tensor x, const RotaryTables &tables,
                       llvm::StringRef name);

/// Lookup in a [vocab, dim] table (normal, std 0.02). `table` receives it.
Tensor embeddingLayer(GraphBuilder &b, Tensor ids, int64_t vocab, int64_t dim,
                      llvm::StringRef name, Tensor *table = nullptr);

/// How a multi-head attention layer computes softmax(q k^T / sqrt(d)) v:
/// one fused `attention` op, or matmul, scale, softmax and matmul.
enum class AttentionForm { Fused, Unfused };

/// Decoding one position at a time (the zoo's `decode=1` graphs, read by
/// `ampc sample`): x holds one position per row, [batch, 1, hidden]. Each
/// layer reads the keys and values of `length` earlier positions from its
/// inputs `k_cache` and `v_cache` ([batch, length, kvHeads, headDim], f32),
/// attends over them and the new position under the additive `mask`
/// ([batch, 1, 1, length + 1]: 0 where a position is seen, -inf where not),
/// and appends its new k and v ([batch, 1, kvHeads, headDim], rotated) to
/// `newKeysValues` for the caller to mark as outputs and store.
struct AttentionCache {
  Tensor mask;
  int64_t length;
  std::vector<Tensor> *newKeysValues;
};

struct AttentionOptions {
  AttentionForm form = AttentionForm::Unfused;
  /// Position t attends to positions <= t only (decoders); fused form only.
  bool causal = false;
  /// The q, k and v projections' weights, and the output projection's.
  Init weights = Init::xavierUniform(), outWeights = Init::xavierUniform();
  /// Whether the q, k and v projections have biases, and the output
  /// projection (BERT's and GPT-2's have all four, LLaMA's none, Qwen 2's
  /// q, k and v only).
  bool qkvBias = true, outBias = true;
  /// Grouped-query attention: k and v have this many heads (0: as many as
  /// q), each shared by heads / kvHeads query heads.
  int64_t kvHeads = 0;
  /// Rotary position embeddings of q and k with these tables (none when
  /// unset).
  std::optional<RotaryTables> rotary;
  /// One position against a cache of earlier ones (fused form only).
  std::optional<AttentionCache> cache;
  /// Adapters on the projections it names (q, k, v, out).
  const LoraSpec *lora = nullptr;
};

/// Multi-head self-attention of x [batch, seq, hidden]: q, k, v projections,
/// softmax(q k^T / sqrt(d)) v per head, and an output projection.
Tensor multiHeadAttention(GraphBuilder &b, Tensor x, int64_t heads, llvm::StringRef name,
                          const AttentionOptions &options = {});

} // namespace ampc

#endif
