// graph-autodiff: reverse-mode differentiation of the loss.
//
// Algorithm: mark the values that depend on a trainable param (a forward
// sweep). Seed the loss's gradient with a `fill` of 1 named `<loss>.grad_seed`
// (recorded on the graph as `grad_seed`). Visit the forward nodes in reverse
// order; for a node whose result has a gradient, ask its GradientOpInterface
// rule for the gradients of the operands that depend on a param, appending
// the backward nodes before the terminator; sum the contributions of values
// with several consumers. Finally name each param's gradient `<param>.grad`
// (renaming a fresh backward value, or through an identity). Then place
// backward work for memory (passes/BackwardPlacement.h): recompute activations
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

struct GraphAutodiffPass : impl::GraphAutodiffBase<GraphAutodiffPass> {
  using GraphAutodiffBase::GraphAutodiffBase;
  void runOnOperation() override;
};

void GraphAutodiffPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (!g.getLoss()) {
    g.emitError("the graph has no loss to differentiate");
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
        gb.setForward(grad.getDefiningOp() ? grad.getDefiningOp() : op);
        grad = gb.value("add", {previous, grad}, {}, "sum");
      }
      gradOf[v] = grad;
      fresh.insert(grad);
    }
  }

  // Memory: less of the forward stays alive for the backward.
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
