// softmax_cross_entropy (mean or sum over the rows not ignored, or a loss a row,
// integer labels,
// label smoothing, class weights; runtime/numerics/CrossEntropy.h) and
// mse_loss, and their backward.
#include <algorithm>
#include <cmath>

#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/CrossEntropy.h"

namespace ampc::rt {
namespace {

/// Each row's class (i32 or i64 labels), or num::kIgnoredRow, checked
/// before any parallel loop (a bad label fails the step); `counted` gets the
/// rows not ignored.
std::vector<int64_t> rowLabels(KernelContext &c, const num::CrossEntropyRule &rule,
                               const TensorRef &labels, int64_t rows, int64_t &counted) {
  std::vector<int64_t> label(rows);
  counted = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t given =
        labels.dtype == DType::I64 ? labels.as<int64_t>()[r] : labels.as<int32_t>()[r];
    label[r] = rule.rowLabel(given);
    if (label[r] == num::kBadLabel)
      c.fail("label " + std::to_string(given) + " is out of range [0, " +
             std::to_string(rule.classes) + ")" +
             (rule.ignores ? " and is not the ignore_index " + std::to_string(rule.ignoreIndex)
                           : "; rows of a label to skip need --ignore-index " +
                                 std::to_string(given)));
    counted += label[r] != num::kIgnoredRow;
  }
  return label;
}

/// The class weights of a cross entropy (input `at`, any float dtype) in
/// f32, their sum, and the mean's divisor: the counted rows' label weights
/// summed in row order (the counted rows without weights).
struct ClassWeights {
  std::vector<float> w; // empty: every class weighs 1
  double sum = 0, divisor = 0;

  ClassWeights(const KernelContext &c, size_t at, const std::vector<int64_t> &label,
               int64_t counted) {
    divisor = double(counted);
    if (c.in.size() <= at)
      return;
    F32In given(c.in[at]);
    w.assign(given.data(), given.data() + c.in[at].size());
    for (float v : w)
      sum += v;
    divisor = 0;
    for (int64_t y : label)
      if (y != num::kIgnoredRow)
        divisor += w[y];
  }
};

void softmaxCrossEntropy(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0, counted;
  num::CrossEntropyRule rule = num::crossEntropyRuleOf(c.attrs, classes);
  std::vector<int64_t> label = rowLabels(c, rule, labels, rows, counted);
  ClassWeights weights(c, 2, label, counted);
  const float *w = weights.w.empty() ? nullptr : weights.w.data();
  // Reduction "none": each row's loss (0 when ignored), rounded once.
  std::vector<double> perRow(rule.perRow() ? rows : 0);
  double total = 0;
  // Rows in parallel; a low-precision row is widened into scratch first.
#pragma omp parallel reduction(+ : total) if (logits.size() > kParallelGrain)
  {
    std::vector<float> row, e(classes);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      if (label[r] == num::kIgnoredRow)
        continue;
      const float *x = rowF32(logits, r, classes, row);
      float max;
      double sum = expShiftedRow(x, classes, e.data(), max), logitSum = 0;
      if (rule.smoothing != 0.0 && w) {
#pragma omp simd reduction(+ : logitSum)
        for (int64_t k = 0; k < classes; ++k)
          logitSum += double(w[k]) * x[k];
      } else if (rule.smoothing != 0.0) {
#pragma omp simd reduction(+ : logitSum) // in lanes, as expShiftedRow's sum
        for (int64_t k = 0; k < classes; ++k)
          logitSum += x[k];
      }
      double lse = std::log(sum) + max;
      double loss = w ? rule.weightedRowLoss(lse, x[label[r]], logitSum, w[label[r]], weights.sum)
                      : rule.rowLoss(lse, x[label[r]], logitSum);
      total += loss;
      if (rule.perRow())
        perRow[r] = loss;
    }
  }
  if (rule.perRow()) {
    F32Out out(c.out[0]);
    for (int64_t r = 0; r < rows; ++r)
      out[r] = float(perRow[r]);
    out.commit();
    return;
  }
  double divisor = rule.divisor(weights.divisor);
  float loss = float(divisor != 0 ? total / divisor : 0.0);
  fromF32(&loss, c.out[0].data, c.out[0].dtype, 1);
}

void mseLoss(KernelContext &c) {
  F32In p(c.in[0]), t(c.in[1]);
  int64_t n = c.in[0].size();
  double total = 0;
  for (int64_t i = 0; i < n; ++i) {
    double d = double(p[i]) - t[i];
    total += d * d;
  }
  float loss = float(n ? total / n : 0.0);
  fromF32(&loss, c.out[0].data, c.out[0].dtype, 1);
}

void softmaxCrossEntropyBackward(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  const TensorRef &out = c.out[0];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0, counted;
  num::CrossEntropyRule rule = num::crossEntropyRuleOf(c.attrs, classes);
  std::vector<int64_t> label = rowLabels(c, rule, labels, rows, counted);
  ClassWeights weights(c, 3, label, counted);
  const float *w = weights.w.empty() ? nullptr : weights.w.data();
  double divisor = rule.divisor(weights.divisor);
  // A row's factor: dloss over the divisor, or (reduction "none") its own dloss.
  F32In dloss(c.in[2]);
  double rowsFactor = rule.perRow() ? 0.0 : divisor != 0 ? dloss[0] / divisor : 0.0;
  // Rows in parallel: exp(x - max) into the f32 row, then scaled in place.
  // The weights are read into `w` first: the result may take their storage
  // (in place, one row).
#pragma omp parallel if (logits.size() > kParallelGrain)
  {
    bool wideOut = out.dtype == DType::F32;
    std::vector<float> row, e(wideOut ? 0 : classes);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      float *dx = wideOut ? out.as<float>() + r * classes : e.data();
      int64_t y = label[r];
      if (y == num::kIgnoredRow) {
        std::fill(dx, dx + classes, 0.0f);
      } else {
        double factor = rule.perRow() ? double(dloss[r]) : rowsFactor;
        const float *x = rowF32(logits, r, classes, row);
        float max;
        double sum = expShiftedRow(x, classes, dx, max);
        if (w && rule.smoothing != 0.0) {
          double inverseSum = 1.0 / sum, wy = w[y], total = weights.sum;
          float label = dx[y];
#pragma omp simd
          for (int64_t k = 0; k < classes; ++k)
            dx[k] = rule.weightedGradient(dx[k], inverseSum, false, w[k], wy, total, factor);
          dx[y] = rule.weightedGradient(label, inverseSum, true, w[y], wy, total, factor);
        } else if (rule.smoothing != 0.0) {
          double inverseSum = 1.0 / sum;
          float label = dx[y]; // the loop off the label vectorises; the label after
#pragma omp simd
          for (int64_t k = 0; k < classes; ++k)
            dx[k] = rule.smoothedGradient(dx[k], inverseSum, false, factor);
          dx[y] = rule.smoothedGradient(label, inverseSum, true, factor);
        } else { // (softmax - onehot) times the row's weight
          double rowFactor = w ? factor * w[y] : factor;
          float target = dx[y], inverse = float(rowFactor / sum);
          for (int64_t k = 0; k < classes; ++k)
            dx[k] *= inverse;
          dx[y] = float((target / sum - 1.0) * rowFactor); // no cancellation in f32
        }
      }
      if (!wideOut)
        writeF32(dx, out, r * classes, classes);
    }
  }
}

void mseLossBackward(KernelContext &c) {
  int64_t n = c.in[0].size();
  double factor = n ? 2.0 * scalarF32(c.in[2]) / double(n) : 0.0;
  F32In p(c.in[0]), t(c.in[1]);
  F32Out dx(c.out[0]);
  for (int64_t i = 0; i < n; ++i)
    dx[i] = float((double(p[i]) - t[i]) * factor);
  dx.commit();
}

} // namespace

void addLossKernels(KernelTable &t) {
  t[Kernel::SoftmaxCrossEntropy] = softmaxCrossEntropy;
  t[Kernel::MseLoss] = mseLoss;
  t[Kernel::SoftmaxCrossEntropyBackward] = softmaxCrossEntropyBackward;
  t[Kernel::MseLossBackward] = mseLossBackward;
}

} // namespace ampc::rt
