// graph-freeze: freezes params by name, as `requires_grad = False` does in
// PyTorch and `trainable = False` in Keras (docs/training.md, "Freezing").
//
// Algorithm: a param matched by a `freeze` pattern, or by no `train-only`
// pattern when there are some, gets `trainable = false` (passes/
// ParamPatterns.h says how patterns match); autodiff then builds no
// backward for what only frozen params feed, and the optimizer keeps no
// state for them. Patterns that match nothing are errors.
#include "passes/ParamPatterns.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFREEZE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphFreezePass : impl::GraphFreezeBase<GraphFreezePass> {
  using GraphFreezeBase::GraphFreezeBase;

  void runOnOperation() override {
    graph::GraphOp g = getOperation();
    FailureOr<train::ParamPatterns> frozen = train::ParamPatterns::compile(g, "freeze", freeze);
    FailureOr<train::ParamPatterns> kept =
        train::ParamPatterns::compile(g, "train-only", trainOnly);
    if (failed(frozen) || failed(kept))
      return signalPassFailure();
    bool wasTrainable = !train::trainableParams(g).empty();
    Builder b(&getContext());
    for (graph::ParamOp p : g.getOps<graph::ParamOp>())
      if (frozen->matches(p.getName()) || (!kept->empty() && !kept->matches(p.getName())))
        p.setTrainableAttr(b.getBoolAttr(false));
    if (wasTrainable && train::trainableParams(g).empty()) {
      g.emitError("freeze: every param is frozen; nothing is left to train");
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace ampc
