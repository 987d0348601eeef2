// graph-cross-entropy-options: label smoothing and the ignored label of the
// graph's cross entropies, as training options set them (PyTorch's
// `cross_entropy(label_smoothing=, ignore_index=)`; docs/training.md,
// "Label smoothing and ignored labels").
//
// Algorithm: every softmax_cross_entropy op gets the options given as its
// attributes; the gradient rule copies them onto its backward.
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHCROSSENTROPYOPTIONS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphCrossEntropyOptionsPass
    : impl::GraphCrossEntropyOptionsBase<GraphCrossEntropyOptionsPass> {
  using GraphCrossEntropyOptionsBase::GraphCrossEntropyOptionsBase;

  void runOnOperation() override {
    graph::GraphOp g = getOperation();
    if (labelSmoothing > 1.0 || ignoreIndex.size() > 1) {
      g.emitError() << "graph-cross-entropy-options: label-smoothing must be at most 1 and "
                       "ignore-index one label";
      return signalPassFailure();
    }
    auto losses = llvm::to_vector(g.getOps<graph::SoftmaxCrossEntropyOp>());
    if (losses.empty()) {
      g.emitError() << (labelSmoothing >= 0.0 ? "--label-smoothing" : "--ignore-index")
                    << " needs a softmax_cross_entropy loss; this graph has none";
      return signalPassFailure();
    }
    Builder b(&getContext());
    for (graph::SoftmaxCrossEntropyOp op : losses) {
      if (labelSmoothing >= 0.0)
        op.setLabelSmoothingAttr(b.getF64FloatAttr(labelSmoothing));
      if (!ignoreIndex.empty())
        op.setIgnoreIndexAttr(b.getI64IntegerAttr(ignoreIndex[0]));
    }
  }
};

} // namespace
} // namespace ampc
