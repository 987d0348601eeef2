// Elementwise chains (docs/performance.md, "Fusions").
//
// Algorithm, for targets with `elementwise_chains`: a step that is one
// elementwise op on floats (binary arithmetic, a unary function,
// unary_backward; rt::chainOpOf) is a chain of one op. In plan order, each
// such step C takes in the chains P that wrote its operands, where
//  - no step between P and C reads a value P stores. C reads those values
//    from their slots. A value a step after C reads (the backward reads the
//    forward's activations), or that the plan returns, stays one of the
//    chain's outputs; the others take no memory any more;
//  - P's result has as many elements as C's (no op runs more often fused
//    than unfused);
//  - P and C run in the same phase, and no step between them writes one of
//    P's operands in place (P's ops now run where C ran);
//  - the chain stays within num::kChainInputs operands, kChainOps ops and
//    kChainOutputs outputs.
// Where a step between P and C reads a value P stores (the backward's
// recomputed GELU, read by a weight gradient's GEMM before GELU's backward
// reads it), C runs where P ran instead, if C's other operands are written
// before P and not in place between, and C's results take no more bytes
// than the operands whose last reader C was (which now go at P): P's
// values that any other step reads stay outputs. C's operands are read
// once, in P's pass (BERT-base: the GELU input once a layer instead of
// twice), one launch goes, and no step sees more memory in use.
// P's ops run first inside C, and each value P stored is rounded to the
// dtype of its tensor before later ops read it, so the chain computes the
// unfused plan's bits. Chains of two ops or more become `elementwise_chain` steps;
// the folded steps go, and their results take no memory.
#include <algorithm>
#include <optional>

#include "compiler/plan/PlanPass.h"
#include "runtime/core/ElementChain.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::plan {
namespace {

/// A chain while it grows: its operands (distinct buffers), its ops, whose
/// slots number the operands first, then the ops' values, and the buffers
/// it writes with the slot each stores (its result first).
struct ChainProgram {
  std::vector<int> inputs;
  std::vector<rt::ChainOpSpec> ops;
  std::vector<std::pair<int, int>> stores;
};

/// The one-op chain of a plain elementwise step, or nullopt.
std::optional<ChainProgram> programOf(const rt::Plan &plan, const rt::Step &s) {
  if (s.outputs.size() != 1 || !rt::isFloat(plan.buffers[s.outputs[0]].dtype))
    return std::nullopt;
  ChainProgram p;
  std::vector<int> args;
  for (int id : s.inputs) {
    if (!rt::isFloat(plan.buffers[id].dtype))
      return std::nullopt;
    auto at = std::find(p.inputs.begin(), p.inputs.end(), id);
    args.push_back(int(at - p.inputs.begin()));
    if (at == p.inputs.end())
      p.inputs.push_back(id);
  }
  std::optional<rt::ChainOpSpec> op = rt::chainOpOf(s, rt::StepAttrs(s), args);
  if (!op)
    return std::nullopt;
  p.ops.push_back(*op);
  p.stores.push_back({s.outputs[0], (int)p.inputs.size()});
  return p;
}

/// `consumer` with `producer` run first inside it: the consumer reads the
/// values the producer stores from their slots, and of those the chain
/// stores still the ones `keep` names. nullopt when the chain would
/// outgrow its bounds.
template <typename Keep>
std::optional<ChainProgram> merge(const rt::Plan &plan, const ChainProgram &producer,
                                  const ChainProgram &consumer, Keep keep) {
  auto storedSlot = [&](int id) {
    for (auto [stored, slot] : producer.stores)
      if (stored == id)
        return slot;
    return -1;
  };
  ChainProgram m;
  m.inputs = producer.inputs;
  for (int id : consumer.inputs)
    if (storedSlot(id) < 0 && std::find(m.inputs.begin(), m.inputs.end(), id) == m.inputs.end())
      m.inputs.push_back(id);
  int operands = (int)m.inputs.size(), producerOps = (int)producer.ops.size(),
      producerIn = (int)producer.inputs.size(), consumerIn = (int)consumer.inputs.size();
  auto operandSlot = [&](int id) {
    return int(std::find(m.inputs.begin(), m.inputs.end(), id) - m.inputs.begin());
  };
  auto producerSlot = [&](int a) {
    return a < producerIn ? operandSlot(producer.inputs[a]) : operands + (a - producerIn);
  };
  auto consumerSlot = [&](int a) {
    if (a >= consumerIn)
      return operands + producerOps + (a - consumerIn);
    int stored = storedSlot(consumer.inputs[a]);
    return stored >= 0 ? producerSlot(stored) : operandSlot(consumer.inputs[a]);
  };
  // Appends `ops` with their arguments renumbered by `slotOf`.
  auto append = [&](const std::vector<rt::ChainOpSpec> &ops, const auto &slotOf) {
    for (rt::ChainOpSpec op : ops) {
      for (int &a : op.args)
        if (a >= 0)
          a = slotOf(a);
      m.ops.push_back(op);
    }
  };
  append(producer.ops, producerSlot);
  // Each stored value as its tensor held it.
  for (auto [id, slot] : producer.stores)
    m.ops[producerSlot(slot) - operands].round = roundingOf(plan.buffers[id].dtype);
  append(consumer.ops, consumerSlot);
  for (auto [id, slot] : consumer.stores)
    m.stores.push_back({id, consumerSlot(slot)});
  for (auto [id, slot] : producer.stores)
    if (keep(id))
      m.stores.push_back({id, producerSlot(slot)});
  if (m.inputs.size() > (size_t)num::kChainInputs || m.ops.size() > (size_t)num::kChainOps ||
      m.stores.size() > (size_t)num::kChainOutputs)
    return std::nullopt;
  return m;
}

void run(PlanIndex &index, const PassContext &) {
  const rt::Plan &plan = index.plan();
  // The pass's own view of where values are read: a step that moves takes
  // its reads with it, while a chain that absorbs another keeps the reads
  // where the unfused steps made them until the pass ends (the view the
  // byte bound of fitsAt is stated in).
  std::vector<std::vector<int>> readers(plan.buffers.size());
  for (size_t id = 0; id < plan.buffers.size(); ++id)
    readers[id] = index.readers((int)id);
  std::vector<int> writer(plan.buffers.size(), -1); // of the steps so far
  std::vector<std::optional<ChainProgram>> programs(plan.steps.size());
  auto phase = [](const rt::Step &s) { return s.attrs.value("phase", ""); };
  for (int i = 0; i < index.numSteps(); ++i) {
    const rt::Step &step = index.step(i);
    for (int id : step.outputs)
      writer[id] = i;
    std::optional<ChainProgram> program = programOf(plan, step);
    if (!program)
      continue;
    int64_t size = rt::numElements(plan.buffers[step.outputs[0]].shape);
    // Whether the values chain w stores may be written at step i instead:
    // no step between the two reads them.
    auto storesMayMove = [&](int w) {
      for (auto [id, slot] : programs[w]->stores)
        for (int r : readers[id])
          if (r > w && r < i)
            return false;
      return true;
    };
    // Whether a value is still stored once step i computes it: a later step
    // reads it, or the plan returns it.
    auto keep = [&](int id) {
      return index.kept(id) || (!readers[id].empty() && readers[id].back() > i);
    };
    // Whether the chain's operands are ready at w: written before it (or
    // by chain w), and none written in place between w and i.
    auto mayRunAt = [&](int w) {
      for (int id : program->inputs)
        if (writer[id] > w)
          return false;
      return !index.writtenBetween(program->inputs, w, i);
    };
    // Whether running step i at w holds no more bytes over the steps
    // between: its results live from w, the temporaries it read last go
    // there.
    auto fitsAt = [&](int w) {
      int64_t results = 0, freed = 0;
      for (int id : step.outputs)
        results += plan.buffers[id].bytes;
      for (int id : program->inputs)
        if (writer[id] != w && !index.kept(id) && readers[id].back() == i &&
            plan.buffers[id].kind == rt::BufferKind::Temp)
          freed += plan.buffers[id].bytes;
      return results <= freed;
    };
    // Run at w, a value of chain w stays stored if any other step reads it.
    auto readElsewhere = [&](int id) {
      return index.kept(id) ||
             std::any_of(readers[id].begin(), readers[id].end(), [&](int r) { return r != i; });
    };
    int at = i; // where the chain runs
    for (int value : std::vector<int>(program->inputs)) {
      int w = writer[value];
      if (at != i || w < 0 || !programs[w] || rt::numElements(plan.buffers[value].shape) != size ||
          phase(index.step(w)) != phase(step) || index.writtenBetween(programs[w]->inputs, w, i))
        continue;
      bool moves = storesMayMove(w);
      if (!moves && !(mayRunAt(w) && fitsAt(w)))
        continue;
      auto merged = moves ? merge(plan, *programs[w], *program, keep)
                          : merge(plan, *programs[w], *program, readElsewhere);
      if (!merged)
        continue;
      program = std::move(merged);
      programs[w].reset();
      index.erase(w);
      if (!moves)
        at = w;
    }
    if (at != i) { // step i moves to w, its reads with it
      for (int id : step.inputs) {
        readers[id].erase(std::remove(readers[id].begin(), readers[id].end(), i),
                          readers[id].end());
        if (std::count(program->inputs.begin(), program->inputs.end(), id))
          readers[id].insert(std::lower_bound(readers[id].begin(), readers[id].end(), at), at);
      }
      index.move(i, at);
    }
    if (program->ops.size() > 1) {
      rt::Step &chain = index.edit(at);
      rt::Json attrs = rt::Json::object();
      if (chain.attrs.contains("phase"))
        attrs["phase"] = chain.attrs["phase"];
      std::vector<int> results;
      chain.outputs.clear();
      for (auto [id, slot] : program->stores) {
        chain.outputs.push_back(id);
        results.push_back(slot);
        writer[id] = at;
      }
      rt::writeChain(program->ops, results, attrs);
      chain.kernel = rt::Kernel::ElementwiseChain;
      chain.inputs = program->inputs;
      chain.attrs = std::move(attrs);
    }
    programs[at] = std::move(program);
  }
}

} // namespace

const PlanPass elementwiseChains = {"elementwise-chains",
                                    "elementwise ops whose intermediate values nothing else "
                                    "reads run as one step",
                                    true,
                                    true,
                                    unprobedChainTarget,
                                    run};

} // namespace ampc::plan
