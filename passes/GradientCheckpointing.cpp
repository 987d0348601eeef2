// Gradient checkpointing (graph-autodiff's `gradient-checkpointing`): the
// forward is cut into segments at its bottlenecks, and the backward recomputes
// each segment's activations from what the cuts keep instead of holding them
// from the forward (docs/training.md, "Gradient checkpointing").
//
// Algorithm (the articulation-point checkpoints of OpenAI's memory-saving
// gradients, found in one sweep over the forward's order):
//  1. Activations are the forward's float values that depend on both a graph
//     input and a param (frozen ones included). The rest (what depends on
//     params alone, such as weight casts, or on inputs alone, such as masks)
//     neither cuts nor is recomputed here.
//  2. Some activations are kept: the graph's outputs, batch norm's results
//     (recomputing batch norm would move its running statistics twice), and
//     FP8 quantizes' (a byte an element, and each amax feeds its scaling
//     state once).
//  3. A candidate cut is a gap between two forward ops that at most one other
//     activation crosses (made before the gap, read by a forward op after
//     it). In a transformer these are the residual stream between sublayers;
//     in a chain of layers (an MLP), every gap.
//  4. Cuts are chosen among them in order (Chen et al., "Training Deep Nets
//     with Sublinear Memory Cost", 2016): a gap that nothing crosses always;
//     one that an activation crosses once the activations the backward reads
//     since the last cut reach sqrt(T * C) bytes (T: all the backward reads
//     of activations, C: a candidate's crossing activation on average). Then
//     k cuts hold about k * C bytes and a segment about T / k, which that
//     budget balances. A chosen cut's crossing activation is kept: a
//     checkpoint.
//  5. A backward read of any other activation reads a copy instead. A
//     segment's copies (the ops from kept values to what the backward reads,
//     in forward order) are placed before the first backward node that reads
//     one of them. The last segment (the loss's) is not recomputed: its
//     backward runs first, while its activations are still fresh.
// Copies compute the forward's bits: every op is deterministic, dropout's
// stream included (seeded by the node and the step).
#include "passes/BackwardPlacement.h"
#include "passes/TrainingUtil.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseSet.h"

#include <cmath>
#include <map>

using namespace mlir;

namespace ampc::train {
namespace {

/// The forward's activations (step 1) and which of them are kept (step 2).
struct Activations {
  llvm::DenseSet<Value> all, kept;
};

Activations findActivations(Operation *seed) {
  llvm::DenseSet<Value> onInput, onParam;
  Activations acts;
  for (Operation *op = &seed->getBlock()->front(); op != seed; op = op->getNextNode()) {
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      onInput.insert(in.getValue());
      continue;
    }
    if (auto p = dyn_cast<graph::ParamOp>(op)) {
      onParam.insert(p.getValue());
      continue;
    }
    bool input = llvm::any_of(op->getOperands(), [&](Value v) { return onInput.contains(v); });
    bool param = llvm::any_of(op->getOperands(), [&](Value v) { return onParam.contains(v); });
    for (Value r : op->getResults()) {
      if (input)
        onInput.insert(r);
      if (param)
        onParam.insert(r);
      if (!input || !param || !graph::isFloatTensor(r.getType()))
        continue;
      acts.all.insert(r);
      bool returned =
          llvm::any_of(r.getUsers(), [](Operation *u) { return isa<graph::ReturnOp>(u); });
      if (returned || isa<graph::BatchNormOp, graph::Fp8QuantizeOp>(op))
        acts.kept.insert(r);
    }
  }
  return acts;
}

} // namespace

void recomputeSegments(Operation *seed, graph::NameTable &names) {
  Activations acts = findActivations(seed);
  SmallVector<Operation *> forward;
  llvm::DenseMap<Operation *, int64_t> position;
  for (Operation *op = &seed->getBlock()->front(); op != seed; op = op->getNextNode())
    if (!graph::isValueOp(op)) {
      position[op] = forward.size();
      forward.push_back(op);
    }
  int64_t n = forward.size();
  if (n < 2)
    return;

  // Step 3: how many unkept activations cross each gap (gap i follows op i),
  // and the sum of their ids, which names the one where there is one.
  SmallVector<Value> ids;
  SmallVector<int64_t> crossing(n + 1, 0), idSum(n + 1, 0);
  SmallVector<double> readBytes(n, 0.0); // of op i's results, by the backward
  for (Operation *op : forward)
    for (Value r : op->getResults()) {
      if (!acts.all.contains(r) || acts.kept.contains(r))
        continue;
      int64_t made = position[op], lastRead = made;
      bool backward = false;
      for (Operation *user : r.getUsers()) {
        if (auto it = position.find(user); it != position.end())
          lastRead = std::max(lastRead, it->second);
        else
          backward |= seed->isBeforeInBlock(user) && !isa<graph::ReturnOp>(user);
      }
      if (backward)
        readBytes[made] += tensorBytes(r);
      if (lastRead == made)
        continue;
      int64_t id = ids.size();
      ids.push_back(r);
      crossing[made] += 1, crossing[lastRead] -= 1;
      idSum[made] += id, idSum[lastRead] -= id;
    }
  // The candidates (gap, its crossing activation or null) and step 4's budget.
  SmallVector<std::pair<int64_t, Value>> candidates;
  double readTotal = 0, crossingTotal = 0;
  int64_t crossed = 0;
  for (int64_t i = 0, count = 0, sum = 0; i < n; ++i) {
    readTotal += readBytes[i];
    count += crossing[i], sum += idSum[i];
    if (i + 1 < n && count <= 1) {
      candidates.push_back({i, count == 1 ? ids[sum] : Value()});
      if (count == 1)
        crossingTotal += tensorBytes(ids[sum]), ++crossed;
    }
  }
  double budget = crossed ? std::sqrt(readTotal * crossingTotal / crossed) : 0;
  SmallVector<int64_t> segment(n, 0);
  int64_t cuts = 0;
  double sinceCut = 0;
  for (int64_t i = 0, next = 0; i < n; ++i) {
    segment[i] = cuts;
    sinceCut += readBytes[i];
    if (next >= (int64_t)candidates.size() || candidates[next].first != i)
      continue;
    Value checkpoint = candidates[next++].second;
    if (checkpoint && sinceCut < budget)
      continue;
    if (checkpoint)
      acts.kept.insert(checkpoint);
    ++cuts, sinceCut = 0;
  }

  // Step 5: the backward's reads of unkept activations, by segment.
  auto recomputable = [&](Value v) {
    Operation *def = v.getDefiningOp();
    return def && position.count(def) && acts.all.contains(v) && !acts.kept.contains(v);
  };
  std::map<int64_t, SmallVector<OpOperand *>> reads;
  for (Operation *op = seed->getNextNode(); op; op = op->getNextNode())
    for (OpOperand &use : op->getOpOperands())
      if (!isa<graph::ReturnOp>(op) && recomputable(use.get()))
        if (int64_t s = segment[position[use.get().getDefiningOp()]]; s < cuts)
          reads[s].push_back(&use);

  for (auto &[s, uses] : reads) {
    // The ops that lead from kept values to the values read, in forward order.
    llvm::DenseSet<Operation *> needed;
    SmallVector<Value> work;
    Operation *first = nullptr;
    for (OpOperand *use : uses) {
      work.push_back(use->get());
      if (!first || use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    }
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!needed.insert(def).second)
        continue;
      for (Value operand : def->getOperands())
        if (recomputable(operand))
          work.push_back(operand);
    }
    SmallVector<Operation *> ordered(needed.begin(), needed.end());
    llvm::sort(ordered, [&](Operation *a, Operation *b) { return position[a] < position[b]; });
    OpBuilder b(first);
    IRMapping copies;
    for (Operation *op : ordered) {
      Operation *copy = b.clone(*op, copies);
      copy->setAttr("name",
                    b.getStringAttr(names.fresh(graph::nodeName(op).str() + ".recompute")));
      if (op->hasAttr("outs")) {
        SmallVector<std::string> outs;
        for (Value r : op->getResults())
          outs.push_back(names.fresh(graph::valueName(r).str() + ".recompute"));
        copy->setAttr("outs", b.getStrArrayAttr(SmallVector<StringRef>(outs.begin(), outs.end())));
      }
    }
    for (OpOperand *use : uses)
      use->set(copies.lookup(use->get()));
  }
}

} // namespace ampc::train
