#include "models/TokenGraphIO.h"

namespace ampc {

TokenGraphIO::TokenGraphIO(GraphBuilder &b, const ModelArgs &a, int64_t batch, int64_t seq)
    : b_(b), decode_(a.getFlag("decode")), seq_(seq) {
  if (decode_ && batch != 1)
    throw GraphError("a decode graph reads one sequence: --set batch=1 with --set decode=1");
  ids_ = b.input("ids", {batch, decode_ ? 1 : seq}, "i64");
  if (!decode_) {
    targets_ = b.input("targets", {batch, seq}, "i64");
    return;
  }
  pos_ = b.input("pos", {1, 1}, "i64");
  mask_ = b.input("mask", {1, 1, 1, seq + 1}, "f32");
}

Tensor TokenGraphIO::atPositions(Tensor table, llvm::StringRef name) {
  if (!decode_)
    return table;
  int64_t width = 1;
  for (int64_t i = 1; i < table.rank(); ++i)
    width *= table.dim(i);
  Tensor rows = b_.reshape(table, {table.dim(0), width}, (name + ".rows").str());
  return b_.embedding(pos_, rows, (name + ".at").str());
}

std::optional<AttentionCache> TokenGraphIO::cache() {
  if (!decode_)
    return std::nullopt;
  return AttentionCache{mask_, seq_, &newKeysValues_};
}

void TokenGraphIO::finish(Tensor logits) {
  if (!decode_) {
    b_.setLoss(b_.softmaxCrossEntropy(logits, targets_, "loss"));
    return;
  }
  b_.output(logits);
  for (Tensor t : newKeysValues_)
    b_.output(t);
}

} // namespace ampc
