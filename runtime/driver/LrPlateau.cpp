#include "runtime/driver/LrPlateau.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "runtime/core/Errors.h"
#include "runtime/driver/BestCheckpoint.h"

namespace ampc::rt {

/// PyTorch's `eps`: a cut smaller than this leaves the rate as it is.
constexpr double kNegligibleCut = 1e-8;

LrPlateau::LrPlateau(std::string metric, PlateauSettings settings, double lr)
    : metric_(std::move(metric)), settings_(settings), lr_(lr) {}

bool LrPlateau::beats(double value) const {
  if (!best_)
    return true;
  return higherIsBetter(metric_) ? value > *best_ * (1 + settings_.threshold)
                                 : value < *best_ * (1 - settings_.threshold);
}

bool LrPlateau::step(const EvalRecord &e) {
  std::optional<double> v = valueOf(e, metric_);
  if (!v)
    throw RuntimeError("--lr-schedule reduce_lr_on_plateau follows " + metric_ +
                       ": the evaluation at step " + std::to_string(e.step) + " has none");
  if (beats(*v)) {
    best_ = *v;
    bad_ = 0;
  } else {
    ++bad_;
  }
  if (cooldown_ > 0) {
    --cooldown_;
    bad_ = 0;
  }
  if (bad_ <= settings_.patience)
    return false;
  cooldown_ = settings_.cooldown;
  bad_ = 0;
  double cut = std::max(lr_ * settings_.factor, settings_.minLr);
  if (lr_ - cut <= kNegligibleCut)
    return false;
  lr_ = cut;
  return true;
}

void LrPlateau::save(std::map<std::string, std::string> &meta) const {
  char text[32];
  meta["plateau.metric"] = metric_;
  std::snprintf(text, sizeof text, "%.17g", lr_);
  meta["plateau.lr"] = text;
  if (best_) {
    std::snprintf(text, sizeof text, "%.17g", *best_);
    meta["plateau.best"] = text;
  }
  meta["plateau.bad"] = std::to_string(bad_);
  meta["plateau.cooldown"] = std::to_string(cooldown_);
}

void LrPlateau::resume(const std::map<std::string, std::string> &meta) {
  auto number = [&](const char *key) -> std::optional<double> {
    auto it = meta.find(key);
    if (it == meta.end())
      return std::nullopt;
    char *end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    return end == it->second.c_str() || *end ? std::nullopt : std::optional<double>(v);
  };
  auto metric = meta.find("plateau.metric");
  std::optional<double> lr = number("plateau.lr"), bad = number("plateau.bad"),
                        cooldown = number("plateau.cooldown");
  if (metric == meta.end() || metric->second != metric_ || !lr || !bad || !cooldown || !(*lr > 0))
    return;
  lr_ = *lr;
  best_ = number("plateau.best");
  bad_ = (int64_t)*bad;
  cooldown_ = (int64_t)*cooldown;
}

} // namespace ampc::rt
