#include "compiler/LanguageModel.h"

#include "compiler/Diagnostics.h"
#include "ops/GraphOps.h"
#include "passes/TrainingUtil.h"

using namespace mlir;

namespace ampc {

Value exposeLogits(ModuleOp module) {
  auto graphs = module.getOps<graph::GraphOp>();
  if (graphs.empty())
    throw GraphError("the module holds no graph");
  graph::GraphOp g = *graphs.begin();
  std::optional<StringRef> loss = g.getLoss();
  Value lossValue = loss ? train::findValue(g, *loss) : Value();
  Operation *ce = lossValue ? lossValue.getDefiningOp() : nullptr;
  if (!ce || !isa<graph::SoftmaxCrossEntropyOp>(ce))
    throw GraphError("not a language model: its loss must be a softmax_cross_entropy of "
                     "[batch, seq, vocab] logits");
  Value logits = ce->getOperand(0);
  if (cast<RankedTensorType>(logits.getType()).getRank() != 3)
    throw GraphError("not a language model: its loss reads logits of rank " +
                     std::to_string(cast<RankedTensorType>(logits.getType()).getRank()) +
                     ", not [batch, seq, vocab]");
  auto ret = cast<graph::ReturnOp>(g.getBody().front().getTerminator());
  ret->setOperands(ValueRange{logits});
  g.removeLossAttr();
  return logits;
}

} // namespace ampc
