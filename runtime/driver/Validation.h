// Validation during training (docs/training.md, "Validation"): the forward
// plan, given the trained params, over a validation set: the mean loss of
// its batches and, where the graph has a [batch, classes] output and the
// set labels, the accuracy. One executor serves every evaluation of a run.
#ifndef AMPC_RUNTIME_DRIVER_VALIDATION_H
#define AMPC_RUNTIME_DRIVER_VALIDATION_H

#include <optional>
#include <string>

#include "runtime/driver/Data.h"

namespace ampc::rt {

struct EvalRecord {
  int64_t step = 0; // the optimizer step it followed
  std::optional<double> loss, accuracy;
  int64_t samples = 0; // scored for the accuracy
  /// The same of the weights' moving average, where the run keeps one.
  std::optional<double> emaLoss, emaAccuracy;
};

/// The data spec that feeds a validation set named by --val-data:
/// `fashion-mnist-test[:DIR]` is Fashion-MNIST's test set, else the spec
/// itself (FILE.safetensors, tokens:SHARDS); `train` is then false.
std::string validationFeed(const std::string &valData);

class Validation {
public:
  /// `eval` is the forward plan; its params take the values of the trained
  /// plan's params of the same names. Throws RuntimeError when the set
  /// cannot feed the plan.
  Validation(Plan eval, const std::string &valData, uint64_t seed, const std::string &device,
             bool graphs, bool tuneGemms);
  /// Scores `trained`'s params after optimizer step `step`, and their
  /// moving averages where it keeps them (docs/training.md, "Weight
  /// averaging (EMA)").
  EvalRecord run(Executor &trained, int64_t step);
  /// The set has class labels to score accuracy on (token data has not).
  bool labelled() const { return feed_.labelled(); }
  /// What an evaluation gives: a loss, an accuracy (labels and a [batch,
  /// classes] output).
  bool scoresLoss() const { return plan_.loss >= 0; }
  bool scoresAccuracy() const { return logits_ >= 0 && feed_.labelled(); }
  /// The trained plan keeps weight averages of the params (--ema-decay).
  bool scoresAverages(const Plan &trained) const;

private:
  /// Writes the trained params into the eval plan's; then their averages
  /// over those that have one.
  void takeParams(Executor &trained);
  void takeAverages(Executor &trained);
  /// The loss and accuracy of the eval plan's params as they are.
  EvalRecord score();

  Plan plan_;
  Executor ex_;
  DataFeed feed_;
  int logits_;
};

} // namespace ampc::rt

#endif
