// The numerics probes (runtime/core/Probes.h) on the CPU: serial scans in
// chunks, so that counts and extremes are the same on every run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/core/Probes.h"
#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/AttentionScores.h"

namespace ampc::rt {
namespace {

constexpr int64_t kChunk = 4096;

bool anyNonFinite(const TensorRef &t) {
  if (!isFloat(t.dtype))
    return false;
  std::vector<float> buf(kChunk);
  for (int64_t at = 0; at < t.size(); at += kChunk) {
    int64_t n = std::min(kChunk, t.size() - at);
    readF32(t, at, n, buf.data());
    for (int64_t k = 0; k < n; ++k)
      if (!std::isfinite(buf[k]))
        return true;
  }
  return false;
}

void recordNonFinite(KernelContext &c) {
  bool found = false;
  for (size_t i = 0; i + 1 < c.in.size() && !found; ++i)
    found = anyNonFinite(c.in[i]);
  c.in.back().as<uint8_t>()[c.attrs.getInt("slot", 0)] = found;
}

/// A ranges row's counts over the magnitudes it is shown.
struct RangeStats {
  double underflow, overflow, subnormal;
  double maxAbs = 0, maxFinite = 0, minNonzero = 0, under = 0, near = 0, sub = 0;

  explicit RangeStats(const KernelContext &c)
      : underflow(c.attrs.getF64("underflow", 0)), overflow(c.attrs.getF64("overflow", 0)),
        subnormal(c.attrs.getF64("subnormal", 0)) {}

  void add(double a) {
    if (std::isnan(a))
      return;
    maxAbs = std::max(maxAbs, a);
    if (std::isfinite(a))
      maxFinite = std::max(maxFinite, a);
    if (a > 0 && (minNonzero == 0 || a < minNonzero))
      minNonzero = a;
    under += a > 0 && a < underflow;
    sub += a > 0 && a < subnormal;
    near += a > overflow;
  }

  /// Folds the counts of `elements` elements into `row` (the largest
  /// finite one divided by `scale`, the loss scale).
  void commit(double *row, double elements, double scale) const {
    row[kMaxAbs] = std::max(row[kMaxAbs], maxAbs);
    if (minNonzero > 0 && (row[kMinNonzeroAbs] == 0 || minNonzero < row[kMinNonzeroAbs]))
      row[kMinNonzeroAbs] = minNonzero;
    row[kElements] += elements;
    row[kUnderflows] += under;
    row[kNearOverflows] += near;
    row[kSubnormals] += sub;
    row[kMaxAbsUnscaled] = std::max(row[kMaxAbsUnscaled], maxFinite / scale);
  }
};

double *rangeRow(KernelContext &c, int ranges) {
  return c.in[ranges].as<double>() + c.attrs.getInt("slot", 0) * kRangeFields;
}

void recordRange(KernelContext &c) {
  const TensorRef &x = c.in[0];
  RangeStats stats(c);
  // An FP8 operand's probe sees x * scale, the f32 product its quantize rounds.
  float fp8Scale = c.attrs.getBool("fp8_scaled", false) ? scalarF32(c.in[2]) : 1.0f;
  std::vector<float> buf(kChunk);
  for (int64_t at = 0; at < x.size(); at += kChunk) {
    int64_t n = std::min(kChunk, x.size() - at);
    readF32(x, at, n, buf.data());
    for (int64_t k = 0; k < n; ++k)
      stats.add(std::fabs((double)(buf[k] * fp8Scale)));
  }
  stats.commit(rangeRow(c, 1), (double)x.size(), c.in.size() > 2 ? scalarF32(c.in[2]) : 1.0);
}

/// The scores q_i . k_j * scale of an attention (num::forEachAttentionScore)
/// as the row of a value with one element per score the mask keeps.
void recordScoresRange(KernelContext &c) {
  F32In q(c.in[0]), k(c.in[1]);
  const std::vector<int64_t> &qs = c.in[0].shape;
  float scale = float(c.attrs.getF64("scale", 1.0 / std::sqrt(double(qs[3]))));
  RangeStats stats(c);
  int64_t elements = num::forEachAttentionScore(
      q.data(), k.data(), qs[0], qs[1], c.in[1].shape[1], qs[2], qs[3],
      c.attrs.getBool("causal", false), scale,
      [&](float score) { stats.add(std::fabs((double)score)); });
  stats.commit(rangeRow(c, 2), (double)elements, 1.0);
}

} // namespace

void addProbeKernels(KernelTable &t) {
  t[Kernel::RecordNonFinite] = recordNonFinite;
  t[Kernel::RecordRange] = recordRange;
  t[Kernel::RecordScoresRange] = recordScoresRange;
}

} // namespace ampc::rt
