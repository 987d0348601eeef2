// Layer helpers over the builder: each opens a name scope and creates its
// named parameters with initialisers (`fc1.w`, `fc1.b`, ...).
#ifndef AMPC_COMPILER_LAYERS_H
#define AMPC_COMPILER_LAYERS_H

#include "compiler/GraphBuilder.h"

namespace ampc {

/// x @ w + b over the last dimension; w is [in, out] (xavier unless `weights`
/// says otherwise), b zeros.
Tensor linear(GraphBuilder &b, Tensor x, int64_t outFeatures, llvm::StringRef name,
              bool bias = true, const Init &weights = Init::xavierUniform());

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

/// Lookup in a [vocab, dim] table (normal, std 0.02). `table` receives it.
Tensor embeddingLayer(GraphBuilder &b, Tensor ids, int64_t vocab, int64_t dim,
                      llvm::StringRef name, Tensor *table = nullptr);

/// How a multi-head attention layer computes softmax(q k^T / sqrt(d)) v:
/// one fused `attention` op, or matmul, scale, softmax and matmul.
enum class AttentionForm { Fused, Unfused };

struct AttentionOptions {
  AttentionForm form = AttentionForm::Unfused;
  /// Position t attends to positions <= t only (decoders); fused form only.
  bool causal = false;
  /// The q, k and v projections' weights, and the output projection's.
  Init weights = Init::xavierUniform(), outWeights = Init::xavierUniform();
};

/// Multi-head self-attention of x [batch, seq, hidden]: q, k, v projections,
/// softmax(q k^T / sqrt(d)) v per head, and an output projection.
Tensor multiHeadAttention(GraphBuilder &b, Tensor x, int64_t heads, llvm::StringRef name,
                          const AttentionOptions &options = {});

} // namespace ampc

#endif
