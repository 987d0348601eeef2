// softmax_cross_entropy (mean over rows, integer labels) and mse_loss.
#include <cmath>
#include <limits>

#include "runtime/kernels/Exp.h"
#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void softmaxCrossEntropy(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  std::vector<int64_t> label = rowLabels(c, labels, rows, classes);
  double total = 0;
  // Rows in parallel; a low-precision row is widened into scratch first.
#pragma omp parallel reduction(+ : total) if (logits.size() > kParallelGrain)
  {
    std::vector<float> row, e(classes);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      const float *x = rowF32(logits, r, classes, row);
      float max;
      double sum = expShiftedRow(x, classes, e.data(), max);
      total += std::log(sum) + max - x[label[r]];
    }
  }
  float loss = float(rows ? total / rows : 0.0);
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

} // namespace

void addLossKernels(KernelTable &t) {
  t["softmax_cross_entropy"] = softmaxCrossEntropy;
  t["mse_loss"] = mseLoss;
}

} // namespace ampc::rt
