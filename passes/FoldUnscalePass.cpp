// graph-fold-unscale.
//
// Algorithm: for each `check_finite_and_unscale` whose every unscaled
// gradient is read only as the `grad` of an optimizer update (sgd, momentum,
// adam) without a `grad_scale`: make each update read the scaled gradient
// with `grad_scale = S` (no operand when S is the constant 1 of mode none),
// replace the op by a `check_finite` over the same gradients (same name,
// same `found_inf`), and move what rewrites S or a gradient in place after
// the check (update_loss_scaling, an accumulator's reset) after the last
// update. The updates compute `grad * (1 / S)` in f32 exactly as the unscale
// did, so training is bit for bit the same, while the unscaled f32 copy of
// every gradient is neither written nor kept: the check reads the gradients
// once and writes nothing.
#include "passes/Passes.h"

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

/// An optimizer update that reads `use` as its gradient and has no grad_scale.
bool foldableUse(OpOperand &use) {
  Operation *op = use.getOwner();
  if (use.getOperandNumber() != kGradOperand)
    return false;
  if (auto sgd = dyn_cast<graph::SgdOp>(op))
    return !sgd.getGradScale();
  if (auto momentum = dyn_cast<graph::MomentumOp>(op))
    return !momentum.getGradScale();
  if (auto adam = dyn_cast<graph::AdamOp>(op))
    return !adam.getGradScale();
  return false;
}

/// True when `scale` is the constant 1 (loss scaling mode none).
bool isOne(Value scale) {
  auto fill = scale.getDefiningOp<graph::FillOp>();
  return fill && fill.getValue().convertToDouble() == 1.0;
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
  for (auto [grad, unscaled] : llvm::zip(check.getGrads(), check.getUnscaled()))
    for (OpOperand &use : llvm::make_early_inc_range(unscaled.getUses())) {
      Operation *update = use.getOwner();
      use.set(grad);
      if (scaled)
        update->insertOperands(update->getNumOperands(), scale);
      updates.push_back(update);
    }

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
