// Reads a training plan's history (runtime/core/History.h) back from the
// device: the rows written since the last read, one record per optimizer
// step, for the metrics' "history" (docs/training.md, "Curves").
#ifndef AMPC_RUNTIME_DRIVER_HISTORY_H
#define AMPC_RUNTIME_DRIVER_HISTORY_H

#include <optional>
#include <vector>

#include "runtime/device/Executor.h"

namespace ampc::rt {

struct StepRecord {
  int64_t step = 0; // the optimizer step, from 1, counting a resumed run's first
  double loss = 0, lr = 0;
  std::optional<double> lossScale; // absent without loss scaling
  std::optional<double> gradNorm;  // present where the run clips
  bool skipped = false;
};

class HistoryReader {
public:
  /// For a run whose first optimizer step is `firstStep` + 1.
  HistoryReader(const Plan &plan, int64_t firstStep);
  /// Whether the plan records a history.
  bool present() const { return history_ >= 0; }
  /// Whether the ring must be read before `stepsInRun` more steps overwrite
  /// rows not yet read (half of it written since the last read).
  bool due(int64_t stepsInRun) const;
  /// Appends the steps recorded since the last read (a device sync).
  void read(Executor &ex, std::vector<StepRecord> &out);

private:
  int history_ = -1, count_ = -1;
  int64_t firstStep_, read_ = 0;
};

} // namespace ampc::rt

#endif
