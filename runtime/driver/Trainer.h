// The training loop over a training plan (forward, backward, loss scaling and
// optimizer in one step): micro-batches, gradient accumulation, seeded
// shuffling per epoch, checkpoints and exact resume, and evaluation on a
// forward plan with the trained params. Loss, scale and skipped count come
// back from the device once per progress report, not once per step.
#ifndef AMPC_RUNTIME_DRIVER_TRAINER_H
#define AMPC_RUNTIME_DRIVER_TRAINER_H

#include <functional>
#include <map>
#include <optional>

#include "runtime/driver/BestCheckpoint.h"
#include "runtime/driver/Data.h"
#include "runtime/driver/History.h"
#include "runtime/driver/LrPlateau.h"
#include "runtime/driver/Weights.h"
#include "runtime/driver/Validation.h"
#include "runtime/driver/NumericsCheck.h"

namespace ampc::rt {

struct TrainOptions {
  std::string data = "synthetic";
  int64_t steps = 0;  // optimizer steps; 0: `epochs` passes over real data
  int64_t epochs = 1;
  /// The peak learning rate (the rate itself without a schedule).
  double lr = 0.01;
  /// A schedule's length S in optimizer steps (the plan's lr_total_steps
  /// input); 0: the resumed run's, else the step this run ends at.
  int64_t lrTotalSteps = 0;
  uint64_t seed = 0;
  int64_t accumulate = 1;
  std::string checkpoint, resume;
  /// The settings that shape the plan's state (flag -> value: level, dtype,
  /// optimizer, ...): checkpoints record them, and resuming with another
  /// value is an error that names the flag.
  std::map<std::string, std::string> settings;
  /// With N > 0, `checkpoint` is also written every N optimizer steps;
  /// `{step}` in its name is replaced by the optimizer step.
  int64_t saveEvery = 0;
  /// Weights-only safetensors files to start from, together
  /// (runtime/driver/WeightShards.h), and how they lay out Linear weights.
  std::vector<std::string> initFrom;
  WeightLayout initLayout = WeightLayout::FromFile;
  /// Times every kernel (TrainResult::profile).
  bool profile = false;
  std::string device = "cpu";
  /// Capture the step once and replay it (CUDA graphs); off for debugging.
  bool graphs = true;
  /// Time the candidate GEMM algorithms and keep the fastest (ExecOptions).
  bool tuneGemms = false;
  /// Check gradients on a second stream as they are written (ExecOptions).
  bool overlapChecks = true;
  /// Progress reports per run (each reads loss, scale and skipped count).
  int64_t reports = 10;
  /// With N > 0, a progress report every N optimizer steps instead.
  int64_t logEvery = 0;
  /// The validation set (Validation.h: fashion-mnist-test[:DIR] or
  /// FILE.safetensors); empty: Fashion-MNIST's test set when training on
  /// it, else none. Evaluated at the end and, with evalEvery N > 0, every N
  /// optimizer steps.
  std::string valData;
  int64_t evalEvery = 0;
  /// The best of the evaluations (BestCheckpoint.h) by `bestMetric`:
  /// `saveBest` (non-empty) is written with the training state whenever an
  /// evaluation improves on it; with `earlyStop` N > 0 the run stops after
  /// N evaluations in a row that do not.
  std::string saveBest, bestMetric = "val_loss";
  int64_t earlyStop = 0;
  /// Cuts `lr` when `bestMetric` stops improving (LrPlateau.h); needs
  /// evalEvery and a validation set.
  std::optional<PlateauSettings> plateau;
  /// Diagnose non-finite values (runtime/driver/NumericsCheck.h); the plan
  /// must carry the non-finite probes.
  bool checkNumerics = false;
  /// The ranks of a data-parallel run (null: one rank). Each rank trains on
  /// its shard of every batch; rank 0 alone writes the checkpoint and
  /// evaluates. Not owned.
  Communicator *communicator = nullptr;
};

struct TrainProgress {
  int64_t step, totalSteps;
  double loss, lossScale, stepMs;
  int64_t skipped;
};

struct TrainResult {
  /// Optimizer steps run, steps skipped for a non-finite gradient (those of
  /// the resumed run included), and of those, the ones this run skipped.
  int64_t steps = 0, skipped = 0, batch = 0, skippedInRun = 0;
  /// Data parallel: the ranks, and the bytes each rank's collectives move
  /// per optimizer step (the all_reduce steps' tensors).
  int64_t worldSize = 1, allreduceBytesPerStep = 0;
  double stepMsMedian = 0, samplesPerS = 0, finalLoss = 0, lossScale = 1;
  std::optional<double> evalAccuracy;
  int64_t evalSamples = 0;
  /// Why there is no accuracy although the data is labelled, or "".
  std::string evalNote;
  int64_t peakBytes = 0;
  /// The device, the most bytes it held, and per optimizer step the times
  /// the host synchronised with it, or waited for a staging buffer, while
  /// feeding and queuing micro-batches (DeviceStats; the progress reports,
  /// which read values back, are not counted).
  std::string deviceName;
  int64_t devicePeakBytes = 0;
  double hostSyncsPerStep = 0, stagingWaitsPerStep = 0;
  /// With TrainOptions::profile: times per kernel and of whole runs.
  Profile profile;
  /// With TrainOptions::checkNumerics: what the check found.
  std::optional<NumericsReport> numerics;
  /// One record per optimizer step of this run (docs/training.md, "Curves"),
  /// where the plan records a history.
  std::vector<StepRecord> history;
  /// The validations of the run, in step order (the last at its end).
  std::vector<EvalRecord> evals;
  /// The rate cuts on a plateau: (the optimizer step after which, the rate).
  std::vector<std::pair<int64_t, double>> lrCuts;
  /// With saveBest or earlyStop: the best evaluation (of this run and the
  /// resumed one's), and the step an early stop ended the run at (0: none).
  std::optional<BestRecord> best;
  int64_t stoppedAt = 0;
  /// The numerics ranges the plan's range probes gathered (rows of
  /// kRangeFields, runtime/core/Probes.h), when it has them.
  std::vector<double> ranges;
};

class Trainer {
public:
  /// `eval`, when given, is the forward plan whose params (by name) take the
  /// trained values for validation (TrainOptions::valData).
  Trainer(Plan train, std::optional<Plan> eval, TrainOptions options);
  TrainResult run(const std::function<void(const TrainProgress &)> &onReport = {});

private:
  Plan plan_;
  std::optional<Plan> eval_;
  TrainOptions options_;
};

} // namespace ampc::rt

#endif
