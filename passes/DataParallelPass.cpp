// graph-data-parallel.
//
// Algorithm: take the gradients the finite check (`check_finite_and_unscale`,
// from graph-loss-scaling) reads, in the order the backward produces them
// (block order of their producers; accumulators, which are state, in list
// order). Walk them once, keeping one open bucket per dtype: a gradient
// joins its dtype's bucket, and a bucket that reaches `bucket-mib` MiB
// closes. Each bucket becomes one `all_reduce` inserted right after the
// producer of its last gradient (so a device can start it while the
// backward goes on), and the check reads its results; casts of the
// unreduced gradients left unread are erased. With `average`, the
// check's scale operand S becomes S·N: the unscale divides by both, in f32.
// FP8 amaxes are reduced by their max over the ranks before their scale
// updates, so that every rank quantizes with the same scales.
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "llvm/ADT/DenseMap.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHDATAPARALLEL
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphDataParallelPass : impl::GraphDataParallelBase<GraphDataParallelPass> {
  using GraphDataParallelBase::GraphDataParallelBase;
  void runOnOperation() override;
};

/// Whether `a` is produced before `b` (values without a producer op, such
/// as accumulators, come first in their given order).
bool producedBefore(Value a, Value b) {
  Operation *pa = a.getDefiningOp(), *pb = b.getDefiningOp();
  if (pa == pb)
    return false;
  if (graph::isValueOp(pa) != graph::isValueOp(pb))
    return graph::isValueOp(pa);
  return pa->isBeforeInBlock(pb);
}

void GraphDataParallelPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  int64_t ranks = worldSize;
  double mib = bucketMib;
  if (ranks < 1) {
    g.emitError("data parallel: the world size must be at least 1, got ") << ranks;
    return signalPassFailure();
  }
  if (!(mib > 0)) {
    g.emitError("data parallel: the bucket size must be above 0 MiB, got ") << mib;
    return signalPassFailure();
  }
  graph::CheckFiniteAndUnscaleOp check;
  g.walk([&](graph::CheckFiniteAndUnscaleOp op) { check = op; });
  if (!check) {
    g.emitError("data parallel needs the finite check: run graph-loss-scaling first");
    return signalPassFailure();
  }
  if (ranks == 1)
    return;
  SmallVector<Value> grads(check.getGrads().begin(), check.getGrads().end());
  std::vector<size_t> order(grads.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return producedBefore(grads[a], grads[b]); });

  // Buckets by dtype, filled in production order.
  int64_t cap = (int64_t)(mib * 1024 * 1024);
  std::vector<std::vector<size_t>> buckets;
  llvm::DenseMap<Type, std::pair<size_t, int64_t>> open; // dtype -> (bucket, bytes)
  for (size_t i : order) {
    Type dtype = graph::elementType(grads[i].getType());
    auto it = open.find(dtype);
    if (it == open.end()) {
      it = open.insert({dtype, {buckets.size(), 0}}).first;
      buckets.emplace_back();
    }
    buckets[it->second.first].push_back(i);
    it->second.second += train::tensorBytes(grads[i]);
    if (it->second.second >= cap)
      open.erase(it);
  }
  // Buckets in the order their last gradient is produced.
  std::stable_sort(buckets.begin(), buckets.end(), [&](const auto &a, const auto &b) {
    return producedBefore(grads[a.back()], grads[b.back()]);
  });

  graph::NameTable names(g);
  auto fresh = [&](StringRef n) { return names.fresh(n); };
  for (size_t k = 0; k < buckets.size(); ++k) {
    Value last = grads[buckets[k].back()];
    OpBuilder b(g.getContext());
    if (graph::isValueOp(last.getDefiningOp()))
      b.setInsertionPoint(check); // accumulators: once per window, before the check
    else
      b.setInsertionPointAfter(last.getDefiningOp());
    graph::GradBuilder gb(b, fresh);
    SmallVector<Value> operands;
    for (size_t i : buckets[k])
      operands.push_back(grads[i]);
    NamedAttrList attrs;
    attrs.set("world_size", b.getI64IntegerAttr(ranks));
    attrs.set("bucket", b.getI64IntegerAttr((int64_t)k));
    Operation *reduce =
        gb.create("all_reduce", "all_reduce." + std::to_string(k), operands, attrs);
    if (!reduce)
      return signalPassFailure();
    SmallVector<StringRef> outs;
    std::vector<std::string> outNames;
    for (Value v : operands)
      outNames.push_back(names.fresh((graph::valueName(v) + ".sum").str()));
    for (const std::string &n : outNames)
      outs.push_back(n);
    reduce->setAttr("outs", b.getStrArrayAttr(outs));
    if (train::isApplyPhase(check))
      train::markApplyPhase(reduce);
    for (size_t j = 0; j < buckets[k].size(); ++j)
      check->setOperand(buckets[k][j], reduce->getResult(j));
  }
  // Casts of the unreduced gradients that nothing reads (their f32 copies:
  // the check reads the sums in L) go now, not at the cleanup, so that the
  // IR after this pass shows each sum before its cast.
  SmallVector<Operation *> dead;
  for (Value grad : grads)
    for (Operation *user : grad.getUsers())
      if (isa<graph::CastOp>(user) && user->use_empty() && !llvm::is_contained(dead, user))
        dead.push_back(user);
  for (Operation *op : dead)
    op->erase();
  // Batch norm's running statistics are state each rank updates from its
  // own shard: their mean over the ranks is written back, so that every rank
  // keeps the same bits (where PyTorch's DDP broadcasts rank 0's).
  SmallVector<Value> statistics;
  g.walk([&](graph::BatchNormOp bn) {
    for (Value v : {bn.getMean(), bn.getVariance()})
      if (v.getDefiningOp<graph::ParamOp>() && !llvm::is_contained(statistics, v))
        statistics.push_back(v);
  });
  if (!statistics.empty()) {
    OpBuilder b(check);
    graph::GradBuilder gb(b, fresh);
    NamedAttrList attrs;
    attrs.set("world_size", b.getI64IntegerAttr(ranks));
    attrs.set("bucket", b.getI64IntegerAttr((int64_t)buckets.size()));
    Operation *reduce = gb.create("all_reduce", "running_statistics.all_reduce", statistics, attrs);
    if (!reduce)
      return signalPassFailure();
    std::vector<Operation *> added = {reduce};
    for (auto [stat, sum] : llvm::zip(statistics, reduce->getResults())) {
      std::string name = graph::valueName(stat).str();
      Operation *mean = gb.create("scale", name + ".mean_over_ranks", {sum},
                                  {b.getNamedAttr("scale", b.getF64FloatAttr(1.0 / ranks))});
      Operation *write = mean ? gb.create("assign", name + ".sync", {stat, mean->getResult(0)})
                              : nullptr;
      if (!write)
        return signalPassFailure();
      added.push_back(mean);
      added.push_back(write);
    }
    if (train::isApplyPhase(check))
      for (Operation *op : added)
        train::markApplyPhase(op);
  }
  // FP8 amaxes: the largest over the ranks, as one rank on the whole batch
  // would see, so that every rank keeps the same scales (Transformer
  // Engine's amax reduction). One max before the first scale update.
  SmallVector<graph::Fp8ScaleUpdateOp> updates(g.getBody().getOps<graph::Fp8ScaleUpdateOp>());
  if (!updates.empty()) {
    OpBuilder b(updates.front());
    graph::GradBuilder gb(b, fresh);
    SmallVector<Value> amaxes;
    for (graph::Fp8ScaleUpdateOp u : updates)
      amaxes.push_back(u.getAmax());
    NamedAttrList attrs;
    attrs.set("world_size", b.getI64IntegerAttr(ranks));
    attrs.set("bucket", b.getI64IntegerAttr((int64_t)buckets.size() + !statistics.empty()));
    attrs.set("reduce", b.getStringAttr("max"));
    Operation *reduce = gb.create("all_reduce", "fp8_amax.all_reduce", amaxes, attrs);
    if (!reduce)
      return signalPassFailure();
    SmallVector<std::string> outNames;
    for (Value v : amaxes)
      outNames.push_back(names.fresh((graph::valueName(v) + ".max").str()));
    SmallVector<StringRef> outs(outNames.begin(), outNames.end());
    reduce->setAttr("outs", b.getStrArrayAttr(outs));
    for (auto [u, max] : llvm::zip(updates, reduce->getResults()))
      u.getAmaxMutable().assign(max);
  }
  if (average) {
    Value scale = check.getScale();
    OpBuilder b(check);
    graph::GradBuilder gb(b, fresh);
    Operation *scaled = gb.create("scale", "loss_scale.times_world", {scale},
                                  {b.getNamedAttr("scale", b.getF64FloatAttr((double)ranks))});
    if (!scaled)
      return signalPassFailure();
    if (train::isApplyPhase(check))
      train::markApplyPhase(scaled);
    check.getScaleMutable().assign(scaled->getResult(0));
  }
}

} // namespace
} // namespace ampc
