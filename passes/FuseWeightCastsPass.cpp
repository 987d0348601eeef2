// graph-fuse-weight-casts.
//
// Algorithm: for each f32 param P that nothing but (at most) one optimizer
// update (sgd, momentum, adam, lamb, lion) writes during a step (an `ema`
// reads it), and whose casts all go to one dtype L (f16 or bf16): add a
// param `<P>.<L>` of P's shape in L with `copy_of = P` (no training state of
// its own: the runtime starts it from P and rewrites it
// whenever P is written from outside), make every reader of a cast read it,
// erase the casts, and, if P has an update, add `assign(<P>.<L>, P)` right
// after it, in the update's phase. A forward graph's weights thus cast once,
// when they are loaded. Casts round to nearest even and the copy holds the
// same rounding of the same values, so every reader sees the bits it saw
// before; the lowering folds the assign into the update (docs/training.md,
// "Weight copies").
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "ops/GradBuilder.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSEWEIGHTCASTS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphFuseWeightCastsPass : impl::GraphFuseWeightCastsBase<GraphFuseWeightCastsPass> {
  void runOnOperation() override;
};

/// What writes param `p` during a step: nothing, or one optimizer update.
struct Writers {
  bool eligible = true;         // no other writer
  Operation *update = nullptr;  // the optimizer update, if any
};

Writers writersOf(graph::ParamOp p) {
  Writers w;
  for (OpOperand &use : p.getValue().getUses()) {
    Operation *op = use.getOwner();
    bool update = train::isOptimizerUpdate(op);
    if (update && use.getOperandNumber() == 0 && !w.update) {
      w.update = op;
    } else if (isa<graph::EmaOp>(op) && use.getOperandNumber() == 1) {
      continue; // the weight average reads the param it follows
    } else if (isa<graph::BatchNormOp>(op) ? use.getOperandNumber() >= 3
                                           : op->getNumResults() == 0) {
      w.eligible = false; // in-place writers: updates, assign, running statistics
    }
  }
  return w;
}

/// The casts of `p` to one low-precision dtype, or none if they go to
/// several or to anything but f16 and bf16.
SmallVector<graph::CastOp> lowPrecisionCasts(graph::ParamOp p) {
  SmallVector<graph::CastOp> casts;
  Type to;
  for (Operation *user : p.getValue().getUsers()) {
    auto c = dyn_cast<graph::CastOp>(user);
    if (!c)
      continue;
    Type t = graph::elementType(c.getY().getType());
    if (!isa<Float16Type, BFloat16Type>(t) || (to && t != to))
      return {};
    to = t;
    if (!llvm::is_contained(casts, c))
      casts.push_back(c);
  }
  return casts;
}

void GraphFuseWeightCastsPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  graph::NameTable names(g);
  SmallVector<graph::ParamOp> params(g.getBody().getOps<graph::ParamOp>());
  for (graph::ParamOp p : params) {
    if (!graph::elementType(p.getValue().getType()).isF32() || p.getMasterDtype() ||
        p.getCopyOf())
      continue;
    Writers writers = writersOf(p);
    Operation *update = writers.update;
    SmallVector<graph::CastOp> casts = lowPrecisionCasts(p);
    if (!writers.eligible || casts.empty() ||
        (update &&
         llvm::any_of(casts, [&](graph::CastOp c) { return !c->isBeforeInBlock(update); })))
      continue;
    auto type = cast<RankedTensorType>(casts.front().getY().getType());
    std::string name = names.fresh(p.getName().str() + "." +
                                   graph::dtypeName(type.getElementType()));
    OpBuilder b(p);
    b.setInsertionPointAfter(p);
    auto copy = b.create<graph::ParamOp>(NameLoc::get(b.getStringAttr("value '" + name + "'")),
                                         type, b.getStringAttr(name), nullptr,
                                         b.getBoolAttr(false), nullptr, p.getNameAttr());
    for (graph::CastOp c : casts) {
      c.getY().replaceAllUsesWith(copy.getValue());
      c.erase();
    }
    if (!update)
      continue; // nothing writes it during a step: the copy follows host writes alone
    b.setInsertionPointAfter(update);
    graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
    Operation *assign = gb.create("assign", name + ".refresh", {copy.getValue(), p.getValue()});
    if (train::isApplyPhase(update))
      train::markApplyPhase(assign);
  }
}

} // namespace
} // namespace ampc
