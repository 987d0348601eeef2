// graph-optimizer.
//
// Algorithm: find `found_inf` and every param's unscaled gradient (made by
// graph-loss-scaling); add the `lr` input. For each trainable param: pick the
// update target (the param, or a new f32 master `<param>.master` for a param
// stored in low precision), create the optimizer's state (`<param>.velocity`;
// for adam and lamb `<param>.adam_m`, `<param>.adam_v` and one shared
// `optimizer.step` counted by `count_step`; `<param>.lion_m`; for rmsprop
// `<param>.rmsprop_v`, with momentum `<param>.rmsprop_buf`, centered
// `<param>.rmsprop_avg`; `<param>.adagrad_sum`), and append the
// update, conditional on found_inf. A master is followed by `assign` of it to
// the low-precision param. With a schedule, an `lr_schedule` node computes
// the step's rate from the peak `lr`, a state counter `lr_schedule.step` and
// the `lr_total_steps` input before the updates, which read it, and a
// `count_step` without found_inf advances the counter after them: a skipped
// step advances the schedule. Weight decay is L2 (an update attribute) but
// for the decoupled one of adamw, lamb and lion; with no-decay-1d params of
// rank 1 or less get none, and under lamb no trust ratio either (`adapt`
// false), as LAMB's BERT recipes exclude them. With lr-scales, the params a
// pattern matches read the rate through a `scale` by its factor, one per
// pattern (PyTorch's param groups, Paddle's ParamAttr learning_rate). The
// updates run in the apply phase when gradients are accumulated.
#include "passes/ParamPatterns.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include <cmath>

#include "mlir/IR/Verifier.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHOPTIMIZER
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphOptimizerPass : impl::GraphOptimizerBase<GraphOptimizerPass> {
  using GraphOptimizerBase::GraphOptimizerBase;
  void runOnOperation() override;
};

/// lr-scales' patterns and factors; failure after an error on `g`.
LogicalResult parseLrScales(graph::GraphOp g, ArrayRef<std::string> items,
                            std::vector<std::string> &patterns, std::vector<double> &factors) {
  for (StringRef item : items) {
    auto [pattern, text] = item.rsplit('=');
    double factor = 0;
    if (pattern.empty() || text.getAsDouble(factor) || !(factor > 0) || !std::isfinite(factor))
      return g.emitError("lr scale: '")
             << item << "' is not PATTERN=FACTOR with a factor above 0 (--freeze takes "
             << "params out of training)";
    patterns.push_back(pattern.str());
    factors.push_back(factor);
  }
  return success();
}

void GraphOptimizerPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  static const StringRef kinds[] = {"sgd",  "momentum", "adam",    "adamw",
                                    "lamb", "lion",     "rmsprop", "adagrad"};
  if (!llvm::is_contained(kinds, optimizer)) {
    g.emitError("optimizer must be sgd, momentum, adam, adamw, lamb, lion, rmsprop or adagrad, "
                "got '")
        << optimizer << "'";
    return signalPassFailure();
  }
  if (!(initialAccumulator >= 0.0 && std::isfinite(initialAccumulator))) {
    g.emitError("adagrad's initial accumulator must be 0 or above, got ") << initialAccumulator;
    return signalPassFailure();
  }
  Value foundInf = train::findValue(g, "found_inf");
  if (!foundInf) {
    g.emitError("the optimizer needs the finite check: run graph-loss-scaling first");
    return signalPassFailure();
  }
  Operation *check = foundInf.getDefiningOp();
  bool applyPhase = train::isApplyPhase(check);
  MLIRContext *ctx = g.getContext();
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  graph::NameTable names(g);

  Value lr = train::findValue(g, "lr");
  if (!lr) {
    OpBuilder vb(ctx);
    vb.setInsertionPointToStart(&g.getBody().front());
    lr = vb.create<graph::InputOp>(NameLoc::get(vb.getStringAttr("value 'lr'")), f32Scalar,
                                   names.fresh("lr"));
  }
  bool lamb = optimizer == "lamb", adam = optimizer == "adam" || optimizer == "adamw" || lamb;
  double decay = weightDecay >= 0 ? weightDecay.getValue()
                                  : (optimizer == "adamw" || lamb ? 0.01 : 0.0);
  double eps = epsilon >= 0 ? epsilon.getValue()
                            : (lamb ? 1e-6 : optimizer == "adagrad" ? 1e-10 : 1e-8);
  double factor = momentum >= 0 ? momentum.getValue() : (optimizer == "rmsprop" ? 0.0 : 0.9);
  double b2 = beta2 >= 0 ? beta2.getValue() : (optimizer == "lion" ? 0.99 : 0.999);

  OpBuilder b = train::atEnd(g);
  graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
  std::vector<Operation *> updates;
  Value scheduleStep;
  if (lrSchedule != "constant" || warmupSteps > 0) {
    OpBuilder vb(ctx);
    vb.setInsertionPointToStart(&g.getBody().front());
    Value total = vb.create<graph::InputOp>(
        NameLoc::get(vb.getStringAttr("value 'lr_total_steps'")), f32Scalar,
        names.fresh("lr_total_steps"));
    scheduleStep = train::addState(g, names, "lr_schedule.step", f32Scalar, "zeros");
    NamedAttrList attrs;
    attrs.set("kind", b.getStringAttr(lrSchedule));
    attrs.set("warmup_steps", b.getI64IntegerAttr(warmupSteps));
    attrs.set("min_lr", b.getF64FloatAttr(minLr));
    attrs.set("step_every", b.getI64IntegerAttr(lrStepEvery));
    attrs.set("gamma", b.getF64FloatAttr(lrGamma));
    attrs.set("power", b.getF64FloatAttr(lrPower));
    attrs.set("cycles", b.getI64IntegerAttr(lrCycles));
    attrs.set("decay_steps", b.getI64IntegerAttr(lrDecaySteps));
    Operation *schedule =
        gb.create("lr_schedule", "lr_schedule", {lr, scheduleStep, total}, attrs);
    if (!schedule || failed(verify(schedule)))
      return signalPassFailure();
    updates.push_back(schedule);
    lr = schedule->getResult(0);
  }
  Value clipScale;
  if (clipGradNorm > 0) {
    SmallVector<Value> grads;
    for (graph::ParamOp p : train::trainableParams(g))
      if (Value grad = train::findValue(g, train::unscaledGradName(p.getName())))
        grads.push_back(grad);
    NamedAttrList one;
    one.set("value", b.getF64FloatAttr(1.0));
    Operation *unit = gb.create("fill", "clip.unscaled", {}, one, {f32Scalar});
    SmallVector<Value> normOperands = {unit->getResult(0)};
    normOperands.append(grads.begin(), grads.end());
    Operation *norm = gb.create("grad_norm", "grad_norm", normOperands);
    NamedAttrList maxNorm;
    maxNorm.set("max_norm", b.getF64FloatAttr(clipGradNorm));
    Operation *scale = norm ? gb.create("clip_scale", "clip_scale",
                                        {norm->getResult(0), unit->getResult(0)}, maxNorm)
                            : nullptr;
    if (!norm || !scale || failed(verify(norm)) || failed(verify(scale)))
      return signalPassFailure();
    updates.insert(updates.end(), {unit, norm, scale});
    clipScale = scale->getResult(0);
  }
  std::vector<std::string> scalePatterns;
  std::vector<double> factors;
  if (failed(parseLrScales(g, lrScales, scalePatterns, factors)))
    return signalPassFailure();
  FailureOr<train::ParamPatterns> scaled =
      train::ParamPatterns::compile(g, "lr scale", scalePatterns);
  if (failed(scaled))
    return signalPassFailure();
  std::vector<Value> scaledRates(factors.size());
  auto rateOf = [&](StringRef param) -> Value { // the scale made where first read
    int group = scaled->match(param);
    if (group < 0)
      return lr;
    if (!scaledRates[group]) {
      NamedAttrList attrs;
      attrs.set("scale", b.getF64FloatAttr(factors[group]));
      Operation *scale = gb.create("scale", "lr_scale", {lr}, attrs);
      updates.push_back(scale);
      scaledRates[group] = scale->getResult(0);
    }
    return scaledRates[group];
  };
  Value step;
  if (adam) {
    step = train::addState(g, names, "optimizer.step", f32Scalar, "zeros");
    updates.push_back(gb.create("count_step", "optimizer.count_step", {step, foundInf}));
  }
  for (graph::ParamOp p : train::trainableParams(g)) {
    Value grad = train::findValue(g, train::unscaledGradName(p.getName()));
    if (!grad)
      continue;
    std::string name = p.getName().str();
    auto f32Type = cast<RankedTensorType>(grad.getType());
    Value target = p.getValue();
    if (p.getMasterDtype()) {
      target = train::addState(g, names, name + ".master", f32Type, "zeros");
      // The master starts from the param's own initial values (runtime);
      // a param without init is zeros, as the master's.
      if (auto init = p.getInit())
        cast<graph::ParamOp>(target.getDefiningOp()).setInitAttr(*init);
    }
    NamedAttrList attrs;
    SmallVector<Value> operands = {target, grad, rateOf(name), foundInf};
    StringRef op = "sgd";
    bool excluded = noDecay1d && f32Type.getRank() <= 1;
    double paramDecay = excluded ? 0.0 : decay;
    if (paramDecay != 0.0)
      attrs.set("weight_decay", b.getF64FloatAttr(paramDecay));
    if (optimizer == "momentum") {
      op = "momentum";
      operands.push_back(train::addState(g, names, name + ".velocity", f32Type, "zeros"));
      attrs.set("momentum", b.getF64FloatAttr(factor));
      if (nesterov)
        attrs.set("nesterov", b.getBoolAttr(true));
    } else if (optimizer == "lion") {
      op = "lion";
      operands.push_back(train::addState(g, names, name + ".lion_m", f32Type, "zeros"));
      attrs.set("beta1", b.getF64FloatAttr(beta1));
      attrs.set("beta2", b.getF64FloatAttr(b2));
    } else if (optimizer == "rmsprop") {
      op = "rmsprop";
      operands.push_back(train::addState(g, names, name + ".rmsprop_v", f32Type, "zeros"));
      if (factor > 0.0)
        operands.push_back(train::addState(g, names, name + ".rmsprop_buf", f32Type, "zeros"));
      if (centered)
        operands.push_back(train::addState(g, names, name + ".rmsprop_avg", f32Type, "zeros"));
      attrs.set("alpha", b.getF64FloatAttr(alpha));
      attrs.set("epsilon", b.getF64FloatAttr(eps));
      attrs.set("momentum", b.getF64FloatAttr(factor));
      if (centered)
        attrs.set("centered", b.getBoolAttr(true));
    } else if (optimizer == "adagrad") {
      op = "adagrad";
      operands.push_back(train::addState(g, names, name + ".adagrad_sum", f32Type,
                                         initialAccumulator != 0.0 ? "constant" : "zeros",
                                         initialAccumulator));
      attrs.set("epsilon", b.getF64FloatAttr(eps));
    } else if (adam) {
      op = lamb ? "lamb" : "adam";
      operands.push_back(train::addState(g, names, name + ".adam_m", f32Type, "zeros"));
      operands.push_back(train::addState(g, names, name + ".adam_v", f32Type, "zeros"));
      operands.push_back(step);
      attrs.set("beta1", b.getF64FloatAttr(beta1));
      attrs.set("beta2", b.getF64FloatAttr(b2));
      attrs.set("epsilon", b.getF64FloatAttr(eps));
      attrs.set("weight_decay", b.getF64FloatAttr(paramDecay));
      if (optimizer == "adam")
        attrs.set("decoupled", b.getBoolAttr(false));
      if (lamb && excluded)
        attrs.set("adapt", b.getBoolAttr(false));
    }
    if (clipScale) // the optional grad_scale, last
      operands.push_back(clipScale);
    Operation *update = gb.create(op, name + "." + op.str(), operands, attrs);
    if (failed(verify(update)))
      return signalPassFailure();
    updates.push_back(update);
    if (p.getMasterDtype())
      updates.push_back(gb.create("assign", name + ".from_master", {p.getValue(), target}));
  }
  // A pattern whose params are all frozen (or taken by an earlier one)
  // scales nothing: said, not silent.
  for (size_t group = 0; group < factors.size(); ++group)
    if (!scaledRates[group])
      g.emitWarning("lr scale: '")
          << scalePatterns[group]
          << "' sets the rate of no trained param (each it matches is frozen, or an earlier "
             "pattern takes it)";
  if (scheduleStep)
    updates.push_back(gb.create("count_step", "lr_schedule.count_step", {scheduleStep}));
  if (applyPhase)
    for (Operation *op : updates)
      train::markApplyPhase(op);
}

} // namespace
} // namespace ampc
