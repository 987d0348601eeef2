// softmax_cross_entropy (mean over rows, integer labels) and mse_loss.
#include <cmath>
#include <limits>

#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void softmaxCrossEntropy(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  F32In x(logits);
  double total = 0;
  for (int64_t r = 0; r < rows; ++r) {
    int64_t label = labels.dtype == DType::I64 ? labels.as<int64_t>()[r] : labels.as<int32_t>()[r];
    if (label < 0 || label >= classes)
      c.fail("label " + std::to_string(label) + " is out of range [0, " +
             std::to_string(classes) + ")");
    const float *row = x.data() + r * classes;
    float max = -std::numeric_limits<float>::infinity();
    for (int64_t k = 0; k < classes; ++k)
      max = std::max(max, row[k]);
    double sum = 0;
    for (int64_t k = 0; k < classes; ++k)
      sum += std::exp(double(row[k] - max));
    total += std::log(sum) + max - row[label];
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
