// The plan optimizer's view of a plan (docs/architecture.md, "The plan
// optimizer"): per buffer, the steps that read it and the step that writes
// it, kept current as passes rewrite the plan.
#ifndef AMPC_COMPILER_PLAN_PLANINDEX_H
#define AMPC_COMPILER_PLAN_PLANINDEX_H

#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::plan {

/// Steps keep their positions while a pass runs: a step the pass folds away
/// is marked erased (it no longer counts as a reader or writer) and goes at
/// commit(). Every change to a step goes through edit(), which marks the
/// index for a rebuild at the next question: a question always sees the
/// plan as it is.
class PlanIndex {
public:
  explicit PlanIndex(rt::Plan &plan);

  const rt::Plan &plan() const { return plan_; }
  int numSteps() const { return (int)plan_.steps.size(); }
  const rt::Step &step(int i) const { return plan_.steps[i]; }
  const rt::Buffer &buffer(int id) const { return plan_.buffers[id]; }

  /// Step `i`, to change: its kernel, inputs, outputs or attributes.
  rt::Step &edit(int i);
  /// Marks step `i` erased.
  void erase(int i);
  bool erased(int i) const { return erased_[i]; }
  /// Puts step `from` in the place of the erased step `to` (a fused step
  /// runs where the last step it replaces ran); `from` is erased.
  void move(int from, int to);
  /// Adds a temporary numbered next (rt::Plan::addBuffer); returns its id.
  int addBuffer(const std::string &name, rt::DType dtype, std::vector<int64_t> shape);
  /// Drops the erased steps; later steps move up.
  void commit();
  /// The whole plan, for a pass that rewrites it at once (probes, counters,
  /// memory planning); the index rebuilds at the next question.
  rt::Plan &rewrite();

  /// The steps that read buffer `id`, in order, each once.
  const std::vector<int> &readers(int id);
  /// The step that writes `id` as a result, or -1.
  int writer(int id);
  /// The one step that reads `id`, once, where the plan neither returns it
  /// nor reports it as the loss; else -1.
  int soleReader(int id);
  /// Whether the plan returns `id` or reports it as the loss.
  bool kept(int id) const;
  /// Whether a step strictly between `from` and `to` writes one of `ids` in
  /// place (a step without results writes its operands: updates, assign,
  /// accumulate), so a read of them cannot move across it.
  bool writtenBetween(const std::vector<int> &ids, int from, int to) const;

private:
  void refresh();

  rt::Plan &plan_;
  std::vector<bool> erased_;
  bool stale_ = true;
  std::vector<std::vector<int>> readers_;
  std::vector<int> writer_, soleReader_;
};

/// Whether `mm` is a `matmul` step of one GEMM that can take an epilogue: b
/// a matrix, a untransposed, a non-empty sum.
bool oneGemm(const rt::Plan &plan, const rt::Step &mm);

/// "f16" or "bf16" for a tensor of those, else "": what a value stored in a
/// tensor of `dtype` is rounded to, as fused steps' rounding attributes
/// name it.
std::string roundingOf(rt::DType dtype);

} // namespace ampc::plan

#endif
