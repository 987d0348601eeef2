// graph-ema.
//
// Algorithm: find `found_inf` (graph-loss-scaling's) and, per trainable
// param P with an optimizer update, what the update writes: P's f32 master
// `<P>.master` where graph-optimizer made one, else P. Add the state
// `<P>.ema` (f32, P's init: the runtime starts it from P's initial values,
// as it does a master) and, at the end of the step, `ema(<P>.ema, target,
// found_inf[, ema.step])`, after every update, so that it reads the updated
// weights. With warmup, a `count_step` of applied steps (`ema.step`) comes
// first. Every op added runs in the apply phase when gradients are
// accumulated.
#include "ops/GradBuilder.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "mlir/IR/Verifier.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHEMA
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphEmaPass : impl::GraphEmaBase<GraphEmaPass> {
  using GraphEmaBase::GraphEmaBase;
  void runOnOperation() override;
};

/// Whether an optimizer update writes `v` (its first operand).
bool updated(Value v) {
  return llvm::any_of(v.getUsers(), [&](Operation *op) {
    return train::isOptimizerUpdate(op) && op->getOperand(0) == v;
  });
}

void GraphEmaPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (!(decay > 0.0 && decay < 1.0)) {
    g.emitError("ema decay must be in (0, 1), got ") << decay.getValue();
    return signalPassFailure();
  }
  Value foundInf = train::findValue(g, "found_inf");
  if (!foundInf) {
    g.emitError("the weight average needs the finite check: run graph-loss-scaling first");
    return signalPassFailure();
  }
  bool applyPhase = train::isApplyPhase(foundInf.getDefiningOp());
  MLIRContext *ctx = g.getContext();
  graph::NameTable names(g);
  OpBuilder b = train::atEnd(g);
  graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
  std::vector<Operation *> added;
  Value step;
  if (warmup) {
    auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
    step = train::addState(g, names, "ema.step", f32Scalar, "zeros");
    added.push_back(gb.create("count_step", "ema.count_step", {step, foundInf}));
  }
  int averaged = 0;
  for (graph::ParamOp p : train::trainableParams(g)) {
    std::string name = p.getName().str();
    Value target = p.getMasterDtype() ? train::findValue(g, name + ".master") : p.getValue();
    if (!target || !updated(target))
      continue; // no gradient reaches it: nothing changes it
    // The runtime starts `<P>.ema` from P's initial values by that name.
    if (names.contains(name + ".ema")) {
      g.emitError("the weight average of '") << name << "' needs the name '" << name
                                             << ".ema', which the graph already uses";
      return signalPassFailure();
    }
    auto f32Type = RankedTensorType::get(cast<RankedTensorType>(p.getType()).getShape(),
                                         Float32Type::get(ctx));
    Value average = train::addState(g, names, name + ".ema", f32Type, "zeros");
    if (auto init = p.getInit()) // else zeros, as the param's
      cast<graph::ParamOp>(average.getDefiningOp()).setInitAttr(*init);
    SmallVector<Value> operands = {average, target, foundInf};
    if (step)
      operands.push_back(step);
    NamedAttrList attrs;
    attrs.set("decay", b.getF64FloatAttr(decay));
    Operation *ema = gb.create("ema", name + ".ema_update", operands, attrs);
    if (!ema || failed(verify(ema)))
      return signalPassFailure();
    added.push_back(ema);
    ++averaged;
  }
  if (averaged == 0)
    g.emitWarning("ema: no trained param to average");
  if (applyPhase)
    for (Operation *op : added)
      train::markApplyPhase(op);
}

} // namespace
} // namespace ampc
