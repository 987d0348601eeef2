#include "runtime/driver/BestCheckpoint.h"

#include <cstdio>
#include <cstdlib>

#include "runtime/core/Errors.h"

namespace ampc::rt {

bool higherIsBetter(const std::string &metric) {
  return metric.size() > 8 && metric.compare(metric.size() - 8, 8, "accuracy") == 0;
}

std::optional<double> valueOf(const EvalRecord &e, const std::string &metric) {
  if (metric == "val_loss")
    return e.loss;
  if (metric == "val_accuracy")
    return e.accuracy;
  if (metric == "ema_val_loss")
    return e.emaLoss;
  return e.emaAccuracy;
}

bool isBestMetric(const std::string &metric) {
  return metric == "val_loss" || metric == "val_accuracy" || metric == "ema_val_loss" ||
         metric == "ema_val_accuracy";
}

BestTracker::BestTracker(std::string metric, int64_t patience)
    : metric_(std::move(metric)), patience_(patience) {}

void requireMetric(const std::string &metric, bool loss, bool accuracy, bool averages) {
  std::string why = metric.rfind("ema_", 0) == 0 && !averages
                        ? "the run keeps no weight averages (--ema-decay D)"
                    : higherIsBetter(metric) && !accuracy
                        ? "the graph has no [batch, classes] output scored on labels (track "
                          "val_loss)"
                    : !higherIsBetter(metric) && !loss ? "the graph has no loss"
                                                       : "";
  if (!why.empty())
    throw RuntimeError("--best-metric " + metric + ": the validation has no " + metric + ": " +
                       why);
}

void BestTracker::requireAvailable(bool loss, bool accuracy, bool averages) const {
  requireMetric(metric_, loss, accuracy, averages);
}

bool BestTracker::improved(const EvalRecord &e) {
  std::optional<double> v = valueOf(e, metric_);
  if (!v)
    throw RuntimeError("--best-metric " + metric_ + ": the evaluation at step " +
                       std::to_string(e.step) + " has no " + metric_);
  bool better = !best_ || (higherIsBetter(metric_) ? *v > best_->value : *v < best_->value);
  if (better) {
    best_ = BestRecord{e.step, *v};
    since_ = 0;
  } else {
    ++since_;
  }
  return better;
}

void BestTracker::save(std::map<std::string, std::string> &meta) const {
  if (!best_)
    return;
  char value[32];
  std::snprintf(value, sizeof value, "%.17g", best_->value);
  meta["best.metric"] = metric_;
  meta["best.value"] = value;
  meta["best.step"] = std::to_string(best_->step);
  meta["best.since"] = std::to_string(since_);
}

void BestTracker::resume(const std::map<std::string, std::string> &meta) {
  auto field = [&](const char *key) -> const std::string * {
    auto it = meta.find(key);
    return it == meta.end() ? nullptr : &it->second;
  };
  const std::string *metric = field("best.metric"), *value = field("best.value"),
                    *step = field("best.step"), *since = field("best.since");
  if (!metric || *metric != metric_ || !value || !step || !since)
    return;
  char *end = nullptr;
  double v = std::strtod(value->c_str(), &end);
  if (end == value->c_str() || *end)
    return; // not a number: compare afresh
  best_ = BestRecord{std::atoll(step->c_str()), v};
  since_ = std::atoll(since->c_str());
}

} // namespace ampc::rt
