// The learning rate cut when the validation stops improving: PyTorch's
// ReduceLROnPlateau (threshold_mode "rel"), Keras's callback of that name and
// Hugging Face's `reduce_lr_on_plateau` (docs/training.md, "Reducing the
// rate on a plateau"). It follows a metric of the evaluations (val_loss
// unless --best-metric says otherwise); after more than `patience`
// evaluations in a row that do not beat the best by the relative
// `threshold`, the rate is multiplied by `factor`, no lower than `minLr`,
// then `cooldown` evaluations pass before it counts again. The rate is the
// step's `lr` input, written by the host at an evaluation, so a replayed
// CUDA graph reads the new one. Its state travels in checkpoint metadata.
#ifndef AMPC_RUNTIME_DRIVER_LRPLATEAU_H
#define AMPC_RUNTIME_DRIVER_LRPLATEAU_H

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "runtime/driver/Validation.h"

namespace ampc::rt {

struct PlateauSettings {
  double factor = 0.1;
  int64_t patience = 10;
  double threshold = 1e-4;
  int64_t cooldown = 0;
  double minLr = 0;
};

class LrPlateau {
public:
  LrPlateau(std::string metric, PlateauSettings settings, double lr);
  /// Takes evaluation `e` (RuntimeError where it lacks the metric): whether
  /// it cut the rate.
  bool step(const EvalRecord &e);
  /// The rate for the steps after the last evaluation.
  double lr() const { return lr_; }
  /// The state as checkpoint metadata, and back (ignored where it followed
  /// another metric, or nothing).
  void save(std::map<std::string, std::string> &meta) const;
  void resume(const std::map<std::string, std::string> &meta);

private:
  bool beats(double value) const;

  std::string metric_;
  PlateauSettings settings_;
  double lr_;
  std::optional<double> best_;
  int64_t bad_ = 0, cooldown_ = 0;
};

} // namespace ampc::rt

#endif
