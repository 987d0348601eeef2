// graph-cross-entropy-options: label smoothing, the ignored label and class
// weights of the graph's cross entropies, as training options set them
// (PyTorch's `cross_entropy(label_smoothing=, ignore_index=, weight=)`;
// docs/training.md, "Label smoothing, ignored labels and class weights").
//
// Algorithm: every softmax_cross_entropy op gets the options given as its
// attributes, and class weights as an f32 const operand (new, or the values
// of the const only it reads); the gradient rule copies them onto its
// backward.
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "ops/GraphNames.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

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

  /// The flag named in errors: the first option given.
  const char *firstFlag() const {
    return labelSmoothing >= 0.0 ? "--label-smoothing"
           : !ignoreIndex.empty() ? "--ignore-index"
                                  : "--class-weights";
  }

  /// `op` weighed by classWeights: a const before it, its `weight` operand.
  LogicalResult setWeights(graph::SoftmaxCrossEntropyOp op, graph::NameTable &names) {
    int64_t classes = cast<RankedTensorType>(op.getLogits().getType()).getShape().back();
    if ((int64_t)classWeights.size() != classes)
      return op.emitError() << "--class-weights gives " << classWeights.size()
                            << " weights; its logits have " << classes << " classes";
    OpBuilder b = train::afterValueOps(op->getParentOfType<graph::GraphOp>());
    auto type = RankedTensorType::get({classes}, b.getF32Type());
    SmallVector<float> values(classWeights.begin(), classWeights.end());
    auto data = DenseElementsAttr::get(type, ArrayRef(values));
    Value old = op.getWeight();
    auto oldConst = old ? old.getDefiningOp<graph::ConstOp>() : nullptr;
    if (oldConst && old.hasOneUse()) { // this loss's own weights: new values
      oldConst.setValueAttr(data);
      return success();
    }
    std::string name = names.fresh(op.getName().str() + ".class_weights");
    Value weights = b.create<graph::ConstOp>(
        NameLoc::get(b.getStringAttr("value '" + name + "'")), type, name, data);
    if (old)
      op.getWeightMutable().assign(weights);
    else
      op.getWeightMutable().append(weights);
    return success();
  }

  void runOnOperation() override {
    graph::GraphOp g = getOperation();
    if (labelSmoothing > 1.0 || ignoreIndex.size() > 1) {
      g.emitError() << "graph-cross-entropy-options: label-smoothing must be at most 1 and "
                       "ignore-index one label";
      return signalPassFailure();
    }
    auto losses = llvm::to_vector(g.getOps<graph::SoftmaxCrossEntropyOp>());
    if (losses.empty()) {
      g.emitError() << firstFlag() << " needs a softmax_cross_entropy loss; this graph has none";
      return signalPassFailure();
    }
    Builder b(&getContext());
    graph::NameTable names(g);
    for (graph::SoftmaxCrossEntropyOp op : losses) {
      if (labelSmoothing >= 0.0)
        op.setLabelSmoothingAttr(b.getF64FloatAttr(labelSmoothing));
      if (!ignoreIndex.empty())
        op.setIgnoreIndexAttr(b.getI64IntegerAttr(ignoreIndex[0]));
      if (!classWeights.empty() && failed(setWeights(op, names)))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace ampc
