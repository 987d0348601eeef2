// The inputs and outputs that the zoo's language models (gpt2, llama) share:
// training graphs take ids and next-token targets [batch, seq] and end in a
// cross-entropy loss; decode graphs (`--set decode=1`, docs/gpt.md, "A KV
// cache") take one token, its position and the attention mask, read each
// layer's k and v cache, and output the logits and the new k and v.
#ifndef AMPC_MODELS_TOKENGRAPHIO_H
#define AMPC_MODELS_TOKENGRAPHIO_H

#include "compiler/Layers.h"
#include "models/Models.h"

namespace ampc {

class TokenGraphIO {
public:
  /// Reads `decode` (0 or 1) and creates the inputs: ids and targets, or
  /// ids, pos ([1, 1]) and mask ([1, 1, 1, seq + 1]).
  TokenGraphIO(GraphBuilder &b, const ModelArgs &a, int64_t batch, int64_t seq);

  bool decoding() const { return decode_; }
  Tensor ids() const { return ids_; }
  /// Rows of a [seq, ...] table at the positions fed: the table itself when
  /// training, its row at `pos` ([1, 1, ...]) when decoding.
  Tensor atPositions(Tensor table, llvm::StringRef name);
  /// The attention layers' cache when decoding.
  std::optional<AttentionCache> cache();
  /// The loss of the logits, or the logits and every layer's new k and v
  /// as outputs.
  void finish(Tensor logits);

private:
  GraphBuilder &b_;
  bool decode_;
  int64_t seq_;
  Tensor ids_, targets_, pos_, mask_;
  std::vector<Tensor> newKeysValues_;
};

} // namespace ampc

#endif
