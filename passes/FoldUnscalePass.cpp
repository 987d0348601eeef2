// graph-fold-unscale.
//
// Algorithm: for each `check_finite_and_unscale` whose every unscaled
// gradient is read only as the `grad` of an optimizer update (sgd, momentum,
// adam, lamb, lion) without a `grad_scale`: make each update read the scaled
// gradient with `grad_scale = S` (no operand when S is the constant 1 of
// mode none),
// replace the op by a `check_finite` over the same gradients (same name,
// same `found_inf`), and move what rewrites S or a gradient in place after
// the check (update_loss_scaling, an accumulator's reset) after the last
// update. The updates compute `grad * (1 / S)` in f32 exactly as the unscale
// did, so training is bit for bit the same, while the unscaled f32 copy of
// every gradient is neither written nor kept: the check reads the gradients
// once and writes nothing. With clipping (graph-optimizer's clip-grad-norm)
// the updates' grad_scale is a `clip_scale` of the unscaled `grad_norm`,
// both over the constant 1: they take S instead, the norm reading the
// scaled gradients, so that it still measures the unscaled ones.
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFOLDUNSCALE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphFoldUnscalePass : impl::GraphFoldUnscaleBase<GraphFoldUnscalePass> {
  void runOnOperation() override;
};

constexpr unsigned kGradOperand = 1;

/// True when `scale` is the constant 1 (loss scaling mode none).
bool isOne(Value scale) {
  auto fill = scale.getDefiningOp<graph::FillOp>();
  return fill && fill.getValue().convertToDouble() == 1.0;
}

/// The clip_scale over the constant 1 that `gradScale` is, or null.
graph::ClipScaleOp unitClip(Value gradScale) {
  auto clip = gradScale ? gradScale.getDefiningOp<graph::ClipScaleOp>() : nullptr;
  return clip && isOne(clip.getScale()) ? clip : nullptr;
}

/// An optimizer update that reads `use` as its gradient, with no
/// grad_scale or clipping's over the constant 1; or a `grad_norm` over the
/// constant 1 that reads it as a gradient.
bool foldableUse(OpOperand &use) {
  Operation *op = use.getOwner();
  if (auto norm = dyn_cast<graph::GradNormOp>(op))
    return use.getOperandNumber() > 0 && isOne(norm.getScale());
  if (use.getOperandNumber() != kGradOperand)
    return false;
  if (!train::isOptimizerUpdate(op))
    return false;
  Value gradScale = train::gradScaleOf(op);
  return !gradScale || unitClip(gradScale);
}

void fold(graph::CheckFiniteAndUnscaleOp check) {
  bool read = false; // nothing reads the unscaled gradients: leave the op
  for (Value unscaled : check.getUnscaled())
    for (OpOperand &use : unscaled.getUses()) {
      if (!foldableUse(use))
        return;
      read = true;
    }
  if (!read)
    return;

  Value scale = check.getScale();
  bool scaled = !isOne(scale);
  SmallVector<Operation *> updates;
  SmallVector<Value> readByUpdates(check.getGrads());
  if (scaled)
    readByUpdates.push_back(scale);
  SmallVector<Operation *> clipping; // grad_norm and clip_scale: they take S
  for (auto [grad, unscaled] : llvm::zip(check.getGrads(), check.getUnscaled()))
    for (OpOperand &use : llvm::make_early_inc_range(unscaled.getUses())) {
      Operation *user = use.getOwner();
      use.set(grad);
      if (isa<graph::GradNormOp>(user)) {
        if (!llvm::is_contained(clipping, user))
          clipping.push_back(user);
        continue;
      }
      Value gradScale = user->getOperand(user->getNumOperands() - 1);
      if (graph::ClipScaleOp clip = unitClip(gradScale)) {
        if (!llvm::is_contained(clipping, clip.getOperation()))
          clipping.push_back(clip);
      } else if (scaled) {
        user->insertOperands(user->getNumOperands(), scale);
      }
      updates.push_back(user);
    }
  if (scaled) // grad_norm's scale is operand 0, clip_scale's operand 1
    for (Operation *op : clipping)
      op->setOperand(isa<graph::GradNormOp>(op) ? 0 : 1, scale);

  OpBuilder b(check);
  OperationState state(check.getLoc(), graph::CheckFiniteOp::getOperationName());
  state.addOperands(check.getGrads());
  state.addTypes(check.getFoundInf().getType());
  NamedAttrList attrs(check->getAttrs());
  if (auto outs = check->getAttrOfType<ArrayAttr>("outs"); outs && !outs.empty())
    attrs.set("outs", b.getArrayAttr({outs.getValue().back()}));
  state.addAttributes(attrs);
  Value foundInf = check.getFoundInf();
  Operation *checkFinite = b.create(state);
  foundInf.replaceAllUsesWith(checkFinite->getResult(0));
  check.erase();

  // State written in place (S by its update, an accumulator by its reset)
  // is now read by the updates too: writers move after the last update,
  // keeping their order.
  Operation *anchor = updates.front();
  for (Operation *u : updates)
    if (anchor->isBeforeInBlock(u))
      anchor = u;
  SmallVector<Operation *> writers;
  for (Value v : readByUpdates)
    for (Operation *user : v.getUsers())
      if (user->getNumResults() == 0 && !isMemoryEffectFree(user) &&
          !llvm::is_contained(updates, user) && checkFinite->isBeforeInBlock(user) &&
          user->isBeforeInBlock(anchor) &&
          !llvm::is_contained(writers, user))
        writers.push_back(user);
  llvm::sort(writers, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *w : writers) {
    w->moveAfter(anchor);
    anchor = w;
  }
}

void GraphFoldUnscalePass::runOnOperation() {
  SmallVector<graph::CheckFiniteAndUnscaleOp> checks;
  getOperation().walk([&](graph::CheckFiniteAndUnscaleOp op) { checks.push_back(op); });
  for (graph::CheckFiniteAndUnscaleOp check : checks)
    fold(check);
}

} // namespace
} // namespace ampc
