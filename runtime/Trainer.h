// The training loop over a training plan (forward, backward, loss scaling and
// optimizer in one step): micro-batches, gradient accumulation, seeded
// shuffling per epoch, checkpoints and exact resume, and evaluation on a
// forward plan with the trained params.
#ifndef AMPC_RUNTIME_TRAINER_H
#define AMPC_RUNTIME_TRAINER_H

#include <functional>
#include <optional>

#include "runtime/Data.h"

namespace ampc::rt {

struct TrainOptions {
  std::string data = "synthetic";
  int64_t steps = 0;  // optimizer steps; 0: `epochs` passes over real data
  int64_t epochs = 1;
  double lr = 0.01;
  uint64_t seed = 0;
  int64_t accumulate = 1;
  std::string checkpoint, resume;
  /// Times every kernel (TrainResult::profile).
  bool profile = false;
};

struct TrainProgress {
  int64_t step, totalSteps;
  double loss, lossScale, stepMs;
  int64_t skipped;
};

struct TrainResult {
  int64_t steps = 0, skipped = 0, batch = 0;
  double stepMsMedian = 0, samplesPerS = 0, finalLoss = 0, lossScale = 1;
  std::optional<double> evalAccuracy;
  int64_t peakBytes = 0;
  /// With TrainOptions::profile: milliseconds per kernel name over the run.
  std::map<std::string, double> profile;
};

class Trainer {
public:
  /// `eval`, when given, is the forward plan whose params (by name) take the
  /// trained values for the accuracy on the test set.
  Trainer(Plan train, std::optional<Plan> eval, TrainOptions options);
  TrainResult run(const std::function<void(const TrainProgress &)> &onStep = {});

private:
  double evaluate(const Executor &trained);
  Plan plan_;
  std::optional<Plan> eval_;
  TrainOptions options_;
};

} // namespace ampc::rt

#endif
