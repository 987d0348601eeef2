// --check-numerics (docs/precision-doctor.md). A training plan lowered with
// non-finite probes (runtime/core/Probes.h) records, per step, whether the
// step's results held an inf or a NaN. After each run the check reads those
// flags once. At a run where some op produced a non-finite value it replays
// the run on a copy of the plan with no memory reuse (so every value
// survives), from the persistent state saved before the run and the same
// batch, finds the first op in execution order whose output is non-finite
// while its inputs are finite, and classifies the cause:
//  - forward overflow in L: the op computes in f16/bf16, and replayed in
//    f32 from the same inputs it is finite: low precision caused it, and
//    loss scaling cannot fix it;
//  - gradient overflow from the loss scale: only the backward overflowed,
//    and the run is finite at S/2 (or a smaller S, at least 1);
//  - backward overflow in L: a gradient overflows L even at S = 1, but not
//    in f32;
//  - non-finite in f32 too: a model or data bug (log of 0, a NaN in an
//    input); the input that carried it is named where it came from outside
//    the run (a graph input or a param).
#ifndef AMPC_RUNTIME_DRIVER_NUMERICSCHECK_H
#define AMPC_RUNTIME_DRIVER_NUMERICSCHECK_H

#include <array>
#include <functional>
#include <memory>
#include <optional>

#include "runtime/device/Executor.h"

namespace ampc::rt {

enum class NonFiniteCause { ForwardOverflowInL, LossScaleOverflow, BackwardOverflowInL, NonFiniteInF32 };
constexpr int kNonFiniteCauses = 4;

/// "forward overflow in L", "gradient overflow from the loss scale", ...
const char *causeName(NonFiniteCause cause);

/// What the check found at one run with a non-finite value.
struct NonFiniteFinding {
  int64_t step = 0;       // the optimizer step (1-based)
  int64_t microBatch = 0; // the run (0-based), which differs with --accumulate
  NonFiniteCause cause = NonFiniteCause::NonFiniteInF32;
  /// The first op whose output is non-finite while its inputs are finite:
  /// its step name and kernel, the dtype it computes in, the output value,
  /// and whether it runs after the loss (the backward).
  std::string op, kernel, dtype, output;
  bool backward = false;
  /// Its float inputs, and the largest magnitude among them as it read them.
  std::vector<std::string> inputs;
  double maxInputAbs = 0;
  /// The input that carried a non-finite value into the run (a graph input,
  /// a param or other state), or the input that an op fused a cast of and
  /// overflowed in rounding; "" for none.
  std::string input;
  /// The op replayed in f32 from the same inputs: its largest |output|
  /// (inf or nan when f32 is not finite either; 0 when not replayed).
  double f32MaxAbs = 0;
  /// The loss scale of the run, and for a loss-scale overflow how many
  /// halvings made the run finite.
  double lossScale = 1;
  int halvings = 0;
  /// An attention (forward or backward): the largest |q k^T scale| of the
  /// scores it computed in f32 from q and k as it read them (NaN if one
  /// is); -1 for any other op.
  double scoresMaxAbs = -1;
};

struct NumericsReport {
  std::optional<NonFiniteFinding> first;
  /// Runs with a non-finite value, per cause (indexed by NonFiniteCause).
  std::array<int64_t, kNonFiniteCauses> counts{};
  int64_t total() const;
};

class NumericsCheck {
public:
  /// `ex` runs `plan`, which must carry the non-finite probes; `options` are
  /// its options (the replay runs with the same device and seed).
  NumericsCheck(const Plan &plan, Executor &ex, const ExecOptions &options);
  ~NumericsCheck();
  /// Before each run: clears the flags and saves the persistent state.
  void beforeRun();
  /// After each run: reads the flags; if any is set, classifies the run.
  /// `refill` writes the run's inputs (the batch, the learning rate) into
  /// the replaying executor.
  void afterRun(int64_t step, int64_t microBatch, bool apply, bool first,
                const std::function<void(Executor &)> &refill);
  const NumericsReport &report() const { return report_; }

private:
  struct Culprit;
  bool anyFlag(Executor &ex) const;
  void replay(bool apply, bool first, const std::function<void(Executor &)> &refill,
              double scale);
  Culprit findCulprit() const;
  NonFiniteFinding classify(const Culprit &c, bool apply, bool first,
                            const std::function<void(Executor &)> &refill);
  const Plan &plan_;
  Executor &ex_;
  ExecOptions options_;
  std::unique_ptr<Executor> replay_;
  std::vector<std::byte> state_;
  int flags_ = -1, scale_ = -1;
  size_t lossStep_ = 0;
  NumericsReport report_;
};

} // namespace ampc::rt

#endif
