// The numerics probes (runtime/core/Probes.h) on the CPU: serial scans in
// chunks, so that counts and extremes are the same on every run.
#include <algorithm>
#include <cmath>
#include <vector>

#include "runtime/core/Probes.h"
#include "runtime/cpu/kernels/KernelUtil.h"

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

void recordRange(KernelContext &c) {
  const TensorRef &x = c.in[0];
  double *row = c.in[1].as<double>() + c.attrs.getInt("slot", 0) * kRangeFields;
  double underflow = c.attrs.getF64("underflow", 0), overflow = c.attrs.getF64("overflow", 0);
  double subnormal = c.attrs.getF64("subnormal", 0);
  double maxAbs = 0, maxFinite = 0, minNonzero = 0, under = 0, near = 0, sub = 0;
  // An FP8 operand's probe sees x * scale, the f32 product its quantize rounds.
  float fp8Scale = c.attrs.getBool("fp8_scaled", false) ? scalarF32(c.in[2]) : 1.0f;
  std::vector<float> buf(kChunk);
  for (int64_t at = 0; at < x.size(); at += kChunk) {
    int64_t n = std::min(kChunk, x.size() - at);
    readF32(x, at, n, buf.data());
    for (int64_t k = 0; k < n; ++k) {
      double a = std::fabs((double)(buf[k] * fp8Scale));
      if (std::isnan(a))
        continue;
      maxAbs = std::max(maxAbs, a);
      if (std::isfinite(a))
        maxFinite = std::max(maxFinite, a);
      if (a > 0 && (minNonzero == 0 || a < minNonzero))
        minNonzero = a;
      under += a > 0 && a < underflow;
      sub += a > 0 && a < subnormal;
      near += a > overflow;
    }
  }
  double scale = c.in.size() > 2 ? scalarF32(c.in[2]) : 1.0;
  row[kMaxAbs] = std::max(row[kMaxAbs], maxAbs);
  if (minNonzero > 0 && (row[kMinNonzeroAbs] == 0 || minNonzero < row[kMinNonzeroAbs]))
    row[kMinNonzeroAbs] = minNonzero;
  row[kElements] += (double)x.size();
  row[kUnderflows] += under;
  row[kNearOverflows] += near;
  row[kSubnormals] += sub;
  row[kMaxAbsUnscaled] = std::max(row[kMaxAbsUnscaled], maxFinite / scale);
}

} // namespace

void addProbeKernels(KernelTable &t) {
  t[Kernel::RecordNonFinite] = recordNonFinite;
  t[Kernel::RecordRange] = recordRange;
}

} // namespace ampc::rt
