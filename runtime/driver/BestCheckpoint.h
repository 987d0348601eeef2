// The best of a run's evaluations (docs/training.md, "The best checkpoint
// and early stopping"): which evaluation scored best on a metric, and how
// many since have not improved on it (Keras's ModelCheckpoint with
// save_best_only and EarlyStopping's patience, Hugging Face's
// metric_for_best_model). The tracking travels in checkpoint metadata, so a
// resumed run goes on comparing with the best before it.
#ifndef AMPC_RUNTIME_DRIVER_BESTCHECKPOINT_H
#define AMPC_RUNTIME_DRIVER_BESTCHECKPOINT_H

#include <map>
#include <optional>
#include <string>

#include "runtime/driver/Validation.h"

namespace ampc::rt {

/// Whether `metric` is one a run can track: val_loss, val_accuracy,
/// ema_val_loss or ema_val_accuracy (losses lower, accuracies higher).
bool isBestMetric(const std::string &metric);
/// Whether a larger value of `metric` is better (the accuracies).
bool higherIsBetter(const std::string &metric);
/// Evaluation `e`'s value of `metric`, if it has one.
std::optional<double> valueOf(const EvalRecord &e, const std::string &metric);
/// Throws RuntimeError, before a run, when its validation cannot give
/// `metric`: it has a loss, an accuracy, the weight averages.
void requireMetric(const std::string &metric, bool loss, bool accuracy, bool averages);

struct BestRecord {
  int64_t step = 0; // the optimizer step the evaluation followed
  double value = 0;
};

class BestTracker {
public:
  /// `patience` 0: never exhausted.
  BestTracker(std::string metric, int64_t patience);
  /// Throws RuntimeError, before the run, when its validation cannot give
  /// the metric: it has a loss, an accuracy, the weight averages.
  void requireAvailable(bool loss, bool accuracy, bool averages) const;
  /// Takes evaluation `e`: whether it beats every one before. Throws
  /// RuntimeError naming the metric when `e` lacks it.
  bool improved(const EvalRecord &e);
  /// Whether the last `patience` evaluations have not improved.
  bool exhausted() const { return patience_ > 0 && since_ >= patience_; }
  const std::optional<BestRecord> &best() const { return best_; }
  const std::string &metric() const { return metric_; }
  int64_t patience() const { return patience_; }
  /// The tracking as checkpoint metadata, and back from a checkpoint's
  /// (ignored when it tracked another metric, or nothing).
  void save(std::map<std::string, std::string> &meta) const;
  void resume(const std::map<std::string, std::string> &meta);

private:
  std::string metric_;
  int64_t patience_, since_ = 0;
  std::optional<BestRecord> best_;
};

} // namespace ampc::rt

#endif
