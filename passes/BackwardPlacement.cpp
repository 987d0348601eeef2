#include "passes/BackwardPlacement.h"

#include "ops/GradBuilder.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace ampc::train {
namespace {

bool isWidening(graph::CastOp c) {
  return graph::elementType(c.getY().getType()).getIntOrFloatBitWidth() >
         graph::elementType(c.getX().getType()).getIntOrFloatBitWidth();
}

bool inBackward(Operation *seed, Operation *op) { return seed->isBeforeInBlock(op); }

/// The uses of `v` by backward nodes (not the graph's outputs).
SmallVector<OpOperand *> backwardUses(Operation *seed, Value v) {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : v.getUses())
    if (inBackward(seed, use.getOwner()) && !isa<graph::ReturnOp>(use.getOwner()))
      uses.push_back(&use);
  return uses;
}

Operation *earliest(ArrayRef<OpOperand *> uses) {
  Operation *first = nullptr;
  for (OpOperand *use : uses)
    if (!first || use->getOwner()->isBeforeInBlock(first))
      first = use->getOwner();
  return first;
}

/// cast(x) to `like`'s dtype, before `at`, named `<name>` made fresh.
Value castBefore(Operation *at, graph::NameTable &names, Value x, graph::CastOp like,
                 StringRef name) {
  OpBuilder b(at);
  graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
  NamedAttrList attrs;
  attrs.set("to", like.getToAttr());
  return gb.create("cast", name, {x}, attrs)->getResult(0);
}

} // namespace

/// Whether `v` stays alive for the backward anyway: a param, or read there.
bool aliveForBackward(Operation *seed, Value v) {
  return v.getDefiningOp<graph::ParamOp>() || !backwardUses(seed, v).empty();
}

void recomputeActivations(Operation *seed, graph::NameTable &names) {
  SmallVector<Operation *> candidates;
  for (Operation *op = &seed->getBlock()->front(); op != seed; op = op->getNextNode()) {
    if (!isa<graph::GeluOp, graph::TanhOp, graph::SigmoidOp, graph::ErfOp, graph::LayerNormOp>(
            op) ||
        op->getNumResults() != 1)
      continue;
    Value y = op->getResult(0);
    bool returned =
        llvm::any_of(y.getUsers(), [](Operation *u) { return isa<graph::ReturnOp>(u); });
    bool operandsAlive = llvm::all_of(op->getOperands(),
                                      [&](Value v) { return aliveForBackward(seed, v); });
    if (!returned && operandsAlive)
      candidates.push_back(op);
  }
  for (Operation *op : candidates) {
    Value y = op->getResult(0);
    SmallVector<OpOperand *> uses = backwardUses(seed, y), all = uses;
    // Forward casts of y that the backward reads (a layer norm's f16 copy).
    SmallVector<std::pair<graph::CastOp, SmallVector<OpOperand *>>> castUses;
    for (Operation *user : y.getUsers())
      if (auto c = dyn_cast<graph::CastOp>(user); c && !inBackward(seed, c))
        if (auto cu = backwardUses(seed, c.getY()); !cu.empty()) {
          castUses.push_back({c, cu});
          all.append(cu.begin(), cu.end());
        }
    if (all.empty())
      continue;
    OpBuilder b(earliest(all));
    Operation *copy = b.clone(*op);
    copy->setAttr("name", b.getStringAttr(names.fresh(graph::nodeName(op).str() + ".recompute")));
    copy->removeAttr("outs");
    for (OpOperand *use : uses)
      use->set(copy->getResult(0));
    for (auto &[c, cu] : castUses) {
      Value again = castBefore(earliest(cu), names, copy->getResult(0), c,
                               (graph::nodeName(c) + ".recompute").str());
      for (OpOperand *use : cu)
        use->set(again);
    }
  }
}

void recomputeWidenedOps(Operation *seed, graph::NameTable &names) {
  SmallVector<Operation *> candidates;
  for (Operation *op = &seed->getBlock()->front(); op != seed; op = op->getNextNode()) {
    if (isa<graph::CastOp>(op) || op->getNumOperands() != 1 || op->getNumResults() != 1)
      continue;
    auto widen = op->getOperand(0).getDefiningOp<graph::CastOp>();
    if (widen && isWidening(widen) && !backwardUses(seed, op->getResult(0)).empty())
      candidates.push_back(op);
  }
  for (Operation *op : candidates) {
    auto widen = op->getOperand(0).getDefiningOp<graph::CastOp>();
    Value result = op->getResult(0);
    SmallVector<OpOperand *> uses = backwardUses(seed, result);
    SmallVector<std::pair<graph::CastOp, SmallVector<OpOperand *>>> castUses;
    for (Operation *user : result.getUsers())
      if (auto c = dyn_cast<graph::CastOp>(user); c && !inBackward(seed, c))
        if (auto cu = backwardUses(seed, c.getY()); !cu.empty()) {
          castUses.push_back({c, cu});
          uses.append(cu.begin(), cu.end());
        }
    Operation *first = earliest(uses);
    std::string nodeName = graph::nodeName(op).str();
    Value widened = castBefore(first, names, widen.getX(), widen,
                               (graph::nodeName(widen) + ".recompute").str());
    OpBuilder b(first);
    IRMapping map;
    map.map(op->getOperand(0), widened);
    Operation *copy = b.clone(*op, map);
    copy->setAttr("name", b.getStringAttr(names.fresh(nodeName + ".recompute")));
    copy->removeAttr("outs");
    for (OpOperand *use : backwardUses(seed, result))
      use->set(copy->getResult(0));
    for (auto &[c, cu] : castUses) {
      Value again = castBefore(earliest(cu), names, copy->getResult(0), c,
                               (graph::nodeName(c) + ".recompute").str());
      for (OpOperand *use : cu)
        use->set(again);
    }
  }
}

void recastForwardCasts(Operation *seed, graph::NameTable &names) {
  auto readByBackward = [&](Value v) {
    return llvm::any_of(v.getUsers(), [&](Operation *u) {
      return !isa<graph::CastOp>(u) && inBackward(seed, u);
    });
  };
  llvm::DenseMap<Value, Value> recast;
  for (Operation *op = seed->getNextNode(); op && !isa<graph::ReturnOp>(op);
       op = op->getNextNode())
    for (OpOperand &use : op->getOpOperands()) {
      auto cast = use.get().getDefiningOp<graph::CastOp>();
      if (!cast || inBackward(seed, cast))
        continue;
      Operation *source = cast.getX().getDefiningOp();
      if (!source || isa<graph::InputOp>(source) ||
          !(graph::isValueOp(source) || readByBackward(cast.getX())))
        continue;
      Value &copy = recast[use.get()];
      if (!copy)
        copy = castBefore(op, names, cast.getX(), cast,
                          (graph::valueName(use.get()) + ".recast").str());
      use.set(copy);
    }
}

void sinkWideningCasts(Operation *seed) {
  SmallVector<graph::CastOp> widening;
  for (Operation *op = seed->getNextNode(); op; op = op->getNextNode())
    if (auto c = dyn_cast<graph::CastOp>(op); c && isWidening(c))
      widening.push_back(c);
  for (graph::CastOp c : widening) {
    SmallVector<OpOperand *> uses = llvm::to_vector(
        llvm::map_range(c.getY().getUses(), [](OpOperand &use) { return &use; }));
    if (Operation *first = earliest(uses))
      c->moveBefore(first);
  }
}

} // namespace ampc::train
