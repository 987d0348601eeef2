// The inference loop over a forward plan, shared by `ampc run`,
// `ampc-plan-run` and the tests: feeds batches, runs the plan, and gathers
// the time per batch, the loss, and the accuracy on labelled data. Values
// come back from the device only where they are reported.
#ifndef AMPC_RUNTIME_DRIVER_RUNNER_H
#define AMPC_RUNTIME_DRIVER_RUNNER_H

#include <functional>
#include <optional>

#include "runtime/driver/Data.h"

namespace ampc::rt {

struct RunOptions {
  std::string data = "synthetic";
  /// Batches to run; unset: one pass over real data (every sample once, the
  /// last batch padded and scored on its real rows only), or 10 synthetic.
  std::optional<int64_t> steps;
  uint64_t seed = 0;
  bool profile = false;
  std::string device = "cpu";
  /// Capture the step once and replay it (CUDA graphs); off for debugging.
  bool graphs = true;
  /// Time the candidate GEMM algorithms and keep the fastest (ExecOptions).
  bool tuneGemms = false;
  /// Progress reports per run (each reads the loss back once).
  int64_t reports = 10;
};

struct RunProgress {
  int64_t batch, totalBatches;
  double batchMs;
  std::optional<double> loss;
};

struct RunResult {
  int64_t steps = 0, batch = 0, samples = 0;
  double msMedian = 0, samplesPerS = 0;
  /// The last batch's loss; over a dataset (not synthetic data), also the
  /// mean of the batches' losses, as validation during training computes it.
  std::optional<double> loss, meanLoss, accuracy;
  /// As in TrainResult: the device, its peak bytes, and host syncs and
  /// staging waits per batch outside progress reports and scoring.
  std::string deviceName;
  int64_t devicePeakBytes = 0;
  double hostSyncsPerStep = 0, stagingWaitsPerStep = 0;
};

class Runner {
public:
  /// Throws PlanError or RuntimeError (bad plan, data spec or device).
  Runner(Plan plan, RunOptions options);
  int64_t batchSize() const { return feed_.batchSize(); }
  RunResult run(const std::function<void(const RunProgress &)> &onReport = {});
  Executor &executor() { return ex_; }

private:
  Plan plan_;
  RunOptions options_;
  Executor ex_;
  DataFeed feed_;
};

/// The first float output of shape [batch, classes] other than the loss:
/// the logits to score; -1 if none.
int logitsBuffer(const Plan &plan, int64_t batch);
/// Of the first `rows` rows of `logits` ([rows, classes], f32), those whose
/// largest entry is the label (a row labelled `ignored` is never right).
int64_t correctPredictions(const std::vector<float> &logits, int64_t classes,
                           const std::vector<int64_t> &labels, int64_t rows,
                           std::optional<int64_t> ignored = std::nullopt);
/// Of the first `rows` labels, those not `ignored`: the rows scored.
int64_t scoredRows(const std::vector<int64_t> &labels, int64_t rows,
                   std::optional<int64_t> ignored);
/// The label the plan's cross entropy ignores (its `ignore_index`), if any.
std::optional<int64_t> ignoredLabel(const Plan &plan);
/// The median of `values` (the upper one of an even count), 0 for none.
double median(std::vector<double> values);
/// Steps 1..total at which a run with `reports` progress reports reports:
/// every total/reports steps, and the last.
bool isReportStep(int64_t step, int64_t total, int64_t reports);

} // namespace ampc::rt

#endif
