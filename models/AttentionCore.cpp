// attention: scaled dot-product attention alone, forward and backward, to
// measure it (scripts/gpu-check.sh attention, docs/benchmarks/): q, k and v
// are params in the fused op's layout [batch, seq, heads, head_dim], and
// the loss mean(attention(q, k, v) * r) gives its output a gradient r/n.
// Unfused, it is what the zoo's BERT writes: the heads transposed out, q
// k^T, the scale, softmax, times v, and the heads merged back. Its defaults
// are FlashAttention's benchmark shape: 16k tokens, 2,048 wide.
#include <cmath>

#include "compiler/Diagnostics.h"
#include "compiler/GraphBuilder.h"
#include "models/Models.h"

namespace ampc {

mlir::OwningOpRef<mlir::ModuleOp> buildAttentionCore(mlir::MLIRContext &ctx, const ModelArgs &a) {
  int64_t batch = a.getInt("batch"), seq = a.getInt("seq"), heads = a.getInt("heads"),
          d = a.getInt("head_dim");
  const std::string &form = a.get("attention"), &causal = a.get("causal");
  if (form != "fused" && form != "unfused")
    throw GraphError("attention: attention must be fused or unfused, got '" + form + "'");
  if (causal != "true" && causal != "false")
    throw GraphError("attention: causal must be true or false, got '" + causal + "'");
  if (causal == "true" && form == "unfused")
    throw GraphError("attention: causal attention is built as the fused op only");
  GraphBuilder b(ctx, "attention");
  std::vector<int64_t> shape = {batch, seq, heads, d};
  Tensor q = b.param("q", shape, Init::normal(1.0)), k = b.param("k", shape, Init::normal(1.0)),
         v = b.param("v", shape, Init::normal(1.0));
  Tensor y;
  if (form == "fused") {
    y = b.attention(q, k, v, causal == "true", std::nullopt, "context");
  } else {
    std::vector<int64_t> swap = {0, 2, 1, 3}; // [batch, heads, seq, head_dim] and back
    Tensor scores = b.matmul(b.transpose(q, swap, "q.heads"), b.transpose(k, swap, "k.heads"),
                             false, true, "scores");
    Tensor probs = b.softmax(b.scale(scores, 1.0 / std::sqrt((double)d), 0.0, "scaled"), -1,
                             "probs");
    y = b.transpose(b.matmul(probs, b.transpose(v, swap, "v.heads"), false, false, "heads"), swap,
                    "context");
  }
  b.output(y);
  b.setLoss(b.reduceMean(b.mul(y, b.input("r", shape), "weighted"), {}, false, "loss"));
  return b.finish();
}

} // namespace ampc
