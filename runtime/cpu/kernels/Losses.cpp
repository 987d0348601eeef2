// softmax_cross_entropy (mean over rows, integer labels) and mse_loss, and
// their backward.
#include <cmath>

#include "runtime/cpu/kernels/KernelUtil.h"

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

void softmaxCrossEntropyBackward(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  const TensorRef &out = c.out[0];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  double factor = rows ? scalarF32(c.in[2]) / double(rows) : 0.0;
  std::vector<int64_t> label = rowLabels(c, labels, rows, classes);
  // Rows in parallel: exp(x - max) into the f32 row, then scaled in place.
#pragma omp parallel if (logits.size() > kParallelGrain)
  {
    bool wideOut = out.dtype == DType::F32;
    std::vector<float> row, e(wideOut ? 0 : classes);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      const float *x = rowF32(logits, r, classes, row);
      float *dx = wideOut ? out.as<float>() + r * classes : e.data();
      float max;
      double sum = expShiftedRow(x, classes, dx, max);
      float target = dx[label[r]], inverse = float(factor / sum);
      for (int64_t k = 0; k < classes; ++k)
        dx[k] *= inverse;
      dx[label[r]] = float((target / sum - 1.0) * factor); // no cancellation in f32
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
