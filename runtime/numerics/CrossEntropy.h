// Cross entropy as PyTorch's `cross_entropy` computes it (docs/runtime.md,
// "Cross entropy"): label smoothing e over C classes makes a row's target
// (1 - e) on its label plus e / C on every class, rows whose label is the
// ignore index count for nothing, and class weights w weigh a row's terms
// by the class each is on (the mean divides by the rows' label weights).
// The reduction is the mean, the sum, or none: one loss a row, each row's
// gradient scaled by its own dloss.
// Host and device code: both backends take a row's loss and gradient from
// here; each reads the weights (any float dtype) its own way.
#ifndef AMPC_RUNTIME_NUMERICS_CROSSENTROPY_H
#define AMPC_RUNTIME_NUMERICS_CROSSENTROPY_H

#include <string>

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

/// rowLabel's answers for a row that has no label in [0, C).
constexpr int64_t kIgnoredRow = -1, kBadLabel = -2;

struct CrossEntropyRule {
  double smoothing = 0.0;
  int64_t classes = 0;
  bool ignores = false;
  int64_t ignoreIndex = 0;
  enum class Reduction { Mean, Sum, None } reduction = Reduction::Mean;

  /// Reduction "none": a loss a row and a dloss a row.
  AMPC_HD bool perRow() const { return reduction == Reduction::None; }

  /// What the rows' loss (and dloss, in the gradient) is divided by:
  /// `counted` (the counted rows, or their label weights) for the mean, 1
  /// for the sum and for none.
  AMPC_HD double divisor(double counted) const {
    return reduction == Reduction::Mean ? counted : 1.0;
  }

  /// The class a row's label names, kIgnoredRow, or kBadLabel.
  AMPC_HD int64_t rowLabel(int64_t label) const {
    if (ignores && label == ignoreIndex)
      return kIgnoredRow;
    return label >= 0 && label < classes ? label : kBadLabel;
  }

  /// A row's loss from its log-sum-exp, its label's logit and (read only
  /// with smoothing) the sum of its logits: lse - (1 - e) x_y - e mean(x).
  /// Without smoothing it is lse - x_y, as written.
  AMPC_HD double rowLoss(double lse, float labelLogit, double logitSum) const {
    if (smoothing == 0.0)
      return lse - labelLogit;
    return lse - (1.0 - smoothing) * labelLogit - smoothing / double(classes) * logitSum;
  }

  /// With smoothing, the gradient of a logit whose exp(x - max) is `e` in a
  /// row whose exps sum to 1 / inverseSum: (softmax - target) * factor, in
  /// double (a product by the row's inverse: no division per element).
  AMPC_HD float smoothedGradient(float e, double inverseSum, bool onLabel, double factor) const {
    double target = smoothing / double(classes) + (onLabel ? 1.0 - smoothing : 0.0);
    return float((double(e) * inverseSum - target) * factor);
  }

  /// With class weights, a row's weighted loss: its label's weight wy, the
  /// weights' sum W and (read only with smoothing) the sum of w_c x_c give
  /// wy (1 - e) (lse - x_y) + e / C (W lse - sum w_c x_c), PyTorch's
  /// numerator. The mean divides the rows' sum by the sum of their wy.
  AMPC_HD double weightedRowLoss(double lse, float labelLogit, double weightedLogitSum,
                                 double labelWeight, double weightSum) const {
    double nll = labelWeight * (lse - double(labelLogit));
    if (smoothing == 0.0)
      return nll;
    return (1.0 - smoothing) * nll +
           smoothing / double(classes) * (weightSum * lse - weightedLogitSum);
  }

  /// With class weights, the gradient of that loss at a logit of weight wk
  /// (as smoothedGradient's arguments): softmax ((1 - e) wy + e W / C) -
  /// ((1 - e) wy on the label + e wk / C), times factor.
  AMPC_HD float weightedGradient(float e, double inverseSum, bool onLabel, double classWeight,
                                 double labelWeight, double weightSum, double factor) const {
    double onSoftmax = (1.0 - smoothing) * labelWeight + smoothing / double(classes) * weightSum;
    double target = (onLabel ? (1.0 - smoothing) * labelWeight : 0.0) +
                    smoothing / double(classes) * classWeight;
    return float((double(e) * inverseSum * onSoftmax - target) * factor);
  }
};

/// A step's rule from its attributes (`label_smoothing`, `ignore_index`,
/// `reduction`, which the plan's reader has checked; a StepAttrs, host
/// side), for a row of `classes` logits.
template <typename Attrs>
CrossEntropyRule crossEntropyRuleOf(const Attrs &attrs, int64_t classes) {
  CrossEntropyRule rule;
  rule.smoothing = attrs.getF64("label_smoothing", 0.0);
  rule.classes = classes;
  rule.ignores = attrs.has("ignore_index");
  rule.ignoreIndex = attrs.getInt("ignore_index", 0);
  std::string reduction = attrs.getStr("reduction", "mean");
  rule.reduction = reduction == "sum"    ? CrossEntropyRule::Reduction::Sum
                   : reduction == "none" ? CrossEntropyRule::Reduction::None
                                         : CrossEntropyRule::Reduction::Mean;
  return rule;
}

} // namespace ampc::num

#endif
