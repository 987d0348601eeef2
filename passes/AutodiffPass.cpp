// graph-autodiff: reverse-mode differentiation of the loss.
//
// Algorithm: mark the values that depend on a trainable param (a forward
// sweep). Seed the loss's gradient with a `fill` of 1 named `<loss>.grad_seed`
// (recorded on the graph as `grad_seed`). Visit the forward nodes in reverse
// order; for a node whose result has a gradient, ask its GradientOpInterface
// rule for the gradients of the operands that depend on a param, appending
// the backward nodes before the terminator; sum the contributions of values
// with several consumers, except that the gradients of adjacent slices of
// one axis (an LSTM's gates, a split) join as a concat placed once, not as
// zero-filled tensors added up (mergeSliceGradients). Finally name each
// param's gradient `<param>.grad` (renaming a fresh backward value, or
// through an identity). Then place
// backward work for memory (passes/BackwardPlacement.h): with gradient
// checkpointing, recompute the forward's segments; recompute activations
// and f32 results of widened L values, recast forward casts, sink widening
// casts.
#include "passes/BackwardPlacement.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "llvm/ADT/DenseSet.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHAUTODIFF
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// The sum of two slice gradients that place their dy's at adjacent ranges
/// of one axis of the same shape: one slice_backward of their concat (the
/// concat itself where it covers the whole input), with the two erased.
/// The zeros either adds are exact, so the values are the same (but for
/// the sign of a zero); null when the two are not such. What it erases
/// leaves `fresh`; a concat that is some param's gradient (`isParamGrad`)
/// is read, not extended.
Value mergeSliceGradients(graph::GradBuilder &gb, Value a, Value b, llvm::DenseSet<Value> &fresh,
                          llvm::function_ref<bool(Value)> isParamGrad) {
  auto sa = a.getDefiningOp<graph::SliceBackwardOp>();
  auto sb = b.getDefiningOp<graph::SliceBackwardOp>();
  // Unread so far: a slice's rule makes its slice_backward for its one
  // operand, whose gradient nothing reads until its producer is visited.
  if (!sa || !sb || sa == sb || !a.use_empty() || !b.use_empty() || sa.getAxes().size() != 1 ||
      sa.getAxes() != sb.getAxes() || sa.getInputShape() != sb.getInputShape() ||
      a.getType() != b.getType())
    return nullptr;
  if (sb.getStarts()[0] < sa.getStarts()[0])
    std::swap(sa, sb);
  int64_t axis = sa.getAxes()[0];
  llvm::ArrayRef<int64_t> shape = sa.getInputShape();
  // Ranges as written (non-negative, in bounds) only: 0 <= a < a' = b < b' <= dim.
  if (axis < 0 || axis >= (int64_t)shape.size() || sa.getStarts()[0] < 0 ||
      sa.getEnds()[0] <= sa.getStarts()[0] || sa.getEnds()[0] != sb.getStarts()[0] ||
      sb.getEnds()[0] <= sb.getStarts()[0] || sb.getEnds()[0] > shape[axis])
    return nullptr;
  // A run of merges (a dy that is the concat an earlier one made, read only
  // here) extends that concat, so each element is copied once.
  SmallVector<Value> parts;
  SmallVector<Operation *> spliced;
  for (graph::SliceBackwardOp side : {sa, sb}) {
    auto earlier = side.getDy().getDefiningOp<graph::ConcatOp>();
    if (earlier && static_cast<int64_t>(earlier.getAxis()) == axis &&
        side.getDy().hasOneUse() && !isParamGrad(side.getDy())) {
      parts.append(earlier.getInputs().begin(), earlier.getInputs().end());
      spliced.push_back(earlier);
    } else {
      parts.push_back(side.getDy());
    }
  }
  NamedAttrList concat;
  concat.set("axis", gb.builder().getI64IntegerAttr(axis));
  gb.setForward(sb);
  Value joined = gb.value("concat", parts, concat, "joined");
  Value merged = joined;
  if (sa.getStarts()[0] != 0 || sb.getEnds()[0] != shape[axis]) {
    NamedAttrList place;
    place.set("axes", sa.getAxesAttr());
    place.set("starts", gb.builder().getDenseI64ArrayAttr({sa.getStarts()[0]}));
    place.set("ends", gb.builder().getDenseI64ArrayAttr({sb.getEnds()[0]}));
    place.set("input_shape", sa.getInputShapeAttr());
    merged = gb.value("slice_backward", {joined}, place, "placed");
  }
  spliced.insert(spliced.begin(), {sa, sb}); // the readers of the concats go first
  for (Operation *op : spliced) {
    fresh.erase(op->getResult(0));
    op->erase();
  }
  return merged;
}

struct GraphAutodiffPass : impl::GraphAutodiffBase<GraphAutodiffPass> {
  using GraphAutodiffBase::GraphAutodiffBase;
  void runOnOperation() override;
};

void GraphAutodiffPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (!g.getLoss()) {
    g.emitError("the graph has no loss to differentiate: name a float scalar as its loss "
                "(a saved graph's \"loss\", the builder's setLoss, or `ampc import --loss` "
                "on a model's output)");
    return signalPassFailure();
  }
  Value loss = train::findValue(g, *g.getLoss());
  std::vector<Operation *> forward;
  for (Operation &op : g.getBody().front())
    if (!graph::isValueOp(&op) && !isa<graph::ReturnOp>(op)) {
      if (!isa<graph::GradientOpInterface>(op)) {
        op.emitError("autodiff takes forward graphs; node '")
            << graph::nodeName(&op) << "' (" << op.getName() << ") is not a forward op";
        return signalPassFailure();
      }
      forward.push_back(&op);
    }

  llvm::DenseSet<Value> dependsOnParam;
  std::vector<graph::ParamOp> params = train::trainableParams(g);
  for (graph::ParamOp p : params)
    dependsOnParam.insert(p.getValue());
  for (Operation *op : forward)
    if (llvm::any_of(op->getOperands(), [&](Value v) { return dependsOnParam.contains(v); }))
      for (Value r : op->getResults())
        if (graph::isFloatTensor(r.getType()))
          dependsOnParam.insert(r);

  graph::NameTable names(g);
  OpBuilder builder = train::atEnd(g);
  graph::GradBuilder gb(builder, [&](StringRef n) { return names.fresh(n); });
  llvm::DenseMap<Value, Value> gradOf;
  llvm::DenseSet<Value> fresh; // backward values made here, safe to rename

  NamedAttrList seedAttrs;
  seedAttrs.set("value", builder.getF64FloatAttr(1.0));
  std::string seedName = (*g.getLoss() + ".grad_seed").str();
  Operation *seed = gb.create("fill", seedName, {}, seedAttrs, {loss.getType()});
  g->setAttr("grad_seed", builder.getStringAttr(graph::nodeName(seed)));
  gradOf[loss] = seed->getResult(0);

  auto isParamGrad = [&](Value v) {
    return llvm::any_of(params, [&](graph::ParamOp p) { return gradOf.lookup(p.getValue()) == v; });
  };
  for (Operation *op : llvm::reverse(forward)) {
    Value dy = gradOf.lookup(op->getResult(0));
    if (!dy)
      continue;
    SmallVector<bool> want;
    bool any = false;
    for (Value v : op->getOperands()) {
      want.push_back(graph::isFloatTensor(v.getType()) && dependsOnParam.contains(v));
      any |= want.back();
    }
    if (!any)
      continue;
    SmallVector<Value> grads(op->getNumOperands());
    gb.setForward(op);
    if (failed(cast<graph::GradientOpInterface>(op).buildGradients(gb, dy, want, grads))) {
      op->emitError("cannot build the gradient of node '") << graph::nodeName(op) << "'";
      return signalPassFailure();
    }
    for (auto [v, grad] : llvm::zip(op->getOperands(), grads)) {
      if (!grad)
        continue;
      if (Value previous = gradOf.lookup(v)) {
        if (Value merged = mergeSliceGradients(gb, previous, grad, fresh, isParamGrad)) {
          grad = merged;
        } else {
          gb.setForward(grad.getDefiningOp() ? grad.getDefiningOp() : op);
          grad = gb.value("add", {previous, grad}, {}, "sum");
        }
      }
      gradOf[v] = grad;
      fresh.insert(grad);
    }
  }

  // Memory: less of the forward stays alive for the backward.
  if (gradientCheckpointing)
    train::recomputeSegments(seed, names);
  if (recompute)
    train::recomputeActivations(seed, names);
  train::recomputeWidenedOps(seed, names);
  train::recastForwardCasts(seed, names);
  train::sinkWideningCasts(seed);

  for (graph::ParamOp p : params) {
    Value grad = gradOf.lookup(p.getValue());
    if (!grad) {
      p.emitWarning("param '") << p.getName() << "' does not affect the loss; it gets no gradient";
      continue;
    }
    std::string name = train::gradName(p.getName());
    if (names.contains(name)) {
      p.emitError("the name '") << name << "' is taken; the gradient needs it";
      return signalPassFailure();
    }
    Operation *def = grad.getDefiningOp();
    if (fresh.contains(grad) && def) {
      names.fresh(name);
      SmallVector<StringRef> outs;
      for (Value r : def->getResults())
        outs.push_back(r == grad ? StringRef(name) : graph::valueName(r));
      def->setAttr("outs", builder.getStrArrayAttr(outs));
      fresh.erase(grad); // another param sharing it gets an identity
    } else {
      gb.create("identity", name, {grad});
    }
  }
}

} // namespace
} // namespace ampc
