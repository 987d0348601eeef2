// graph-loss-scaling.
//
// Algorithm: create the scale state (`loss_scale`, `loss_scale.good`,
// `loss_scale.bad`) unless the mode is none; replace the backward's seed
// (`grad_seed`) by the scale; take every param gradient as it is computed
// (an f16 gradient cast to f32 is read before its cast, which then dies: the
// finite check converts while it unscales); with accumulation, add them into
// f32 accumulators `<param>.grad_acc` every micro-batch and read the
// accumulators in the apply phase; run one
// `check_finite_and_unscale` over all of them (results `<param>.grad_unscaled`
// and `found_inf`, which becomes a graph output); update the scale; reset the
// accumulators. Apply-phase ops carry `phase = "apply"`. State the forward
// changes in place (batch norm's running statistics) is copied at the start
// of the step and restored at its end when found_inf: a skipped step changes
// nothing but the scale counters.
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "mlir/IR/Verifier.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHLOSSSCALING
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphLossScalingPass : impl::GraphLossScalingBase<GraphLossScalingPass> {
  using GraphLossScalingBase::GraphLossScalingBase;
  void runOnOperation() override;
};

void GraphLossScalingPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (mode != "dynamic" && mode != "static" && mode != "none") {
    g.emitError("loss scaling must be dynamic, static or none, got '") << mode << "'";
    return signalPassFailure();
  }
  if (accumulate < 1 || initLossScaling <= 0) {
    g.emitError("accumulate must be at least 1 and the initial loss scale positive");
    return signalPassFailure();
  }
  auto seedName = g->getAttrOfType<StringAttr>("grad_seed");
  Value seed = seedName ? train::findValue(g, seedName.getValue()) : nullptr;
  if (!seed) {
    g.emitError("loss scaling needs the backward: run graph-autodiff first");
    return signalPassFailure();
  }
  graph::NameTable names(g);
  MLIRContext *ctx = g.getContext();
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));

  Value scale = seed;
  Value good, bad;
  if (mode != "none") {
    scale = train::addState(g, names, "loss_scale", f32Scalar, "constant", initLossScaling);
    good = train::addState(g, names, "loss_scale.good", f32Scalar, "zeros");
    bad = train::addState(g, names, "loss_scale.bad", f32Scalar, "zeros");
    OpBuilder b(ctx);
    b.setInsertionPoint(seed.getDefiningOp());
    graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
    Value seedValue = gb.cast(scale, graph::elementType(seed.getType()));
    seed.replaceAllUsesWith(seedValue);
    seed.getDefiningOp()->erase();
    g->removeAttr("grad_seed");
  }

  OpBuilder b = train::atEnd(g);
  graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
  std::vector<graph::ParamOp> params;
  SmallVector<Value> grads;
  for (graph::ParamOp p : train::trainableParams(g)) {
    Value grad = train::findValue(g, train::gradName(p.getName()));
    if (!grad)
      continue;
    params.push_back(p);
    // The f32 cast of a low-precision gradient: read what it casts instead;
    // left without users, graph-fold-casts removes it.
    if (auto cast = grad.getDefiningOp<graph::CastOp>())
      if (grad.use_empty() && graph::isFloatTensor(cast.getX().getType()))
        grad = cast.getX();
    grads.push_back(grad);
  }
  std::vector<Operation *> apply;
  SmallVector<Value> accumulators;
  if (accumulate > 1)
    for (auto [p, grad] : llvm::zip(params, grads)) {
      Value acc = train::addState(g, names, (p.getName() + ".grad_acc").str(),
                                  cast<RankedTensorType>(grad.getType()), "zeros");
      gb.create("accumulate", (p.getName() + ".accumulate").str(), {acc, grad});
      accumulators.push_back(acc);
      grad = acc;
    }

  SmallVector<Value> checked(grads.begin(), grads.end());
  checked.push_back(scale);
  Operation *check = gb.create("check_finite_and_unscale", "check_finite", checked);
  SmallVector<StringRef> outs;
  std::vector<std::string> outNames;
  for (graph::ParamOp p : params)
    outNames.push_back(names.fresh(train::unscaledGradName(p.getName())));
  outNames.push_back(names.fresh("found_inf"));
  for (const std::string &n : outNames)
    outs.push_back(n);
  check->setAttr("outs", b.getStrArrayAttr(outs));
  apply.push_back(check);
  Value foundInf = check->getResults().back();

  if (mode != "none") {
    NamedAttrList attrs;
    attrs.set("incr_every_n_steps", b.getI64IntegerAttr(incrEveryNSteps));
    attrs.set("decr_every_n_nan_or_inf", b.getI64IntegerAttr(decrEveryNNanOrInf));
    attrs.set("incr_ratio", b.getF64FloatAttr(incrRatio));
    attrs.set("decr_ratio", b.getF64FloatAttr(decrRatio));
    attrs.set("dynamic", b.getBoolAttr(mode == "dynamic"));
    Operation *update = gb.create("update_loss_scaling", "update_loss_scaling",
                                  {foundInf, scale, good, bad}, attrs);
    if (!update || failed(verify(update)))
      return signalPassFailure();
    apply.push_back(update);
  }
  for (Value acc : accumulators) {
    NamedAttrList zero;
    zero.set("value", b.getF64FloatAttr(0.0));
    std::string accName = graph::valueName(acc).str();
    Operation *zeros = gb.create("fill", accName + ".zeros", {}, zero, {acc.getType()});
    apply.push_back(zeros);
    apply.push_back(gb.create("assign", accName + ".reset", {acc, zeros->getResult(0)}));
  }
  if (accumulate > 1)
    for (Operation *op : apply)
      train::markApplyPhase(op);

  // Batch norm's running statistics: back up at the start, restore if skipped.
  Operation *firstNode = nullptr;
  for (Operation &op : g.getBody().front())
    if (!graph::isValueOp(&op)) {
      firstNode = &op;
      break;
    }
  SmallVector<Value> statistics;
  g.walk([&](graph::BatchNormOp bn) {
    for (Value v : {bn.getMean(), bn.getVariance()})
      if (v.getDefiningOp<graph::ParamOp>() && !llvm::is_contained(statistics, v))
        statistics.push_back(v);
  });
  for (Value stat : statistics) {
    std::string name = graph::valueName(stat).str();
    Value backup = train::addState(g, names, name + ".backup",
                                   cast<RankedTensorType>(stat.getType()), "zeros");
    OpBuilder top(firstNode);
    graph::GradBuilder tb(top, [&](StringRef n) { return names.fresh(n); });
    Operation *save = tb.create("assign", name + ".save", {backup, stat});
    Operation *restore = gb.create("restore_if_skipped", name + ".restore",
                                   {stat, backup, foundInf});
    if (accumulate > 1) {
      train::markFirstPhase(save);
      train::markApplyPhase(restore);
    }
  }

  auto ret = cast<graph::ReturnOp>(g.getBody().front().getTerminator());
  ret.getOutputsMutable().append(foundInf);
  g->setAttr("accumulate", b.getI64IntegerAttr(accumulate));
}

} // namespace
} // namespace ampc
