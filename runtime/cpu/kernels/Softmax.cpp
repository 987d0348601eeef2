// softmax and log_softmax (sums in double, a vectorised exp over the last
// axis) and their backward. A scale folded into either (docs/runtime.md,
// "Softmax scales") is applied as the scale step applied it: num::Scale,
// then the rounding to the dtype of the step's result.
#include <cmath>
#include <limits>

#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt {
namespace {

/// e[k] = exp(x[k] - max); returns max. Compares and numerics/Exp.h's
/// arithmetic: every copy gives the same bits.
AMPC_VECTOR_CLONES float shiftedExps(const float *x, int64_t n, float *e) {
  float m = x[0];
#pragma omp simd reduction(max : m)
  for (int64_t k = 1; k < n; ++k)
    m = x[k] > m ? x[k] : m;
#pragma omp simd
  for (int64_t k = 0; k < n; ++k)
    e[k] = num::vectorExp(x[k] - m);
  return m;
}

} // namespace

/// The max and the exponentials in the processor's widest vectors, their
/// f64 sum in the baseline's lanes: its order is the build's, not the
/// processor's (also the cross entropy's).
double expShiftedRow(const float *x, int64_t n, float *e, float &max) {
  max = shiftedExps(x, n, e);
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t k = 0; k < n; ++k)
    sum += e[k];
  return sum;
}

namespace {

/// f32 values with a folded scale applied in place.
void applyScale(const FoldedScale &f, float *v, int64_t n) {
  if (!f.present)
    return;
  num::Scale scale{f.scale, f.bias};
  for (int64_t i = 0; i < n; ++i)
    v[i] = scale.value(v[i]);
  roundIn(v, f.round, n);
}

template <bool Log> void softmaxOf(KernelContext &c) {
  const TensorRef &x = c.in[0];
  int64_t axis = axisOf(attrInt(c, "axis", -1), x.rank());
  int64_t dim = x.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    inner *= x.shape[d];
  int64_t outer = (dim * inner) != 0 ? x.size() / (dim * inner) : 0;
  if (inner == 1) { // the last axis: contiguous rows, vectorised exp
    const TensorRef &yt = c.out[0];
#pragma omp parallel if (x.size() > kParallelGrain)
    {
      std::vector<float> xRow, yRow(yt.dtype == DType::F32 ? 0 : dim);
#pragma omp for
      for (int64_t o = 0; o < outer; ++o) {
        const float *px = rowF32(x, o, dim, xRow);
        float max, *py = yt.dtype == DType::F32 ? yt.as<float>() + o * dim : yRow.data();
        double sum = expShiftedRow(px, dim, py, max), logSum = std::log(sum);
        float inverse = float(1.0 / sum);
        for (int64_t k = 0; k < dim; ++k)
          py[k] = Log ? float(double(px[k] - max) - logSum) : py[k] * inverse;
        if (yt.dtype != DType::F32)
          writeF32(py, yt, o * dim, dim);
      }
    }
    return;
  }
  F32In fx(x);
  F32Out y(c.out[0]);
#pragma omp parallel for collapse(2) if (x.size() > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const float *px = fx.data() + o * dim * inner + i;
      float *py = y.data() + o * dim * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < dim; ++k)
        max = std::max(max, px[k * inner]);
      double sum = 0;
      for (int64_t k = 0; k < dim; ++k)
        sum += std::exp(double(px[k * inner] - max));
      double logSum = std::log(sum);
      for (int64_t k = 0; k < dim; ++k) {
        double shifted = px[k * inner] - max;
        py[k * inner] = float(Log ? shifted - logSum : std::exp(shifted - logSum));
      }
    }
  y.commit();
}

/// dx as softmax_backward stored it, then the folded scale step after it.
void applyOutputScale(const FoldedScale &out, float *dx, int64_t n) {
  if (!out.present)
    return;
  roundIn(dx, out.round, n);
  num::Scale scale{out.scale, out.bias};
  for (int64_t i = 0; i < n; ++i)
    dx[i] = scale.value(dx[i]);
}

/// softmax_backward along the last axis: rows on the threads, each read and
/// written in f32 through its own row buffers; the same sums as below.
void lastAxisBackward(KernelContext &c, bool log, const FoldedScale &out, int64_t rows,
                      int64_t dim) {
  const TensorRef &yt = c.in[0], &dyt = c.in[1], &dxt = c.out[0];
#pragma omp parallel if (yt.size() > kParallelGrain)
  {
    std::vector<float> yRow, dyRow, dxRow(dxt.dtype == DType::F32 ? 0 : dim);
#pragma omp for
    for (int64_t r = 0; r < rows; ++r) {
      const float *y = rowF32(yt, r, dim, yRow), *dy = rowF32(dyt, r, dim, dyRow);
      float *dx = dxt.dtype == DType::F32 ? dxt.as<float>() + r * dim : dxRow.data();
      double dot = 0;
      for (int64_t k = 0; k < dim; ++k)
        dot += log ? dy[k] : double(dy[k]) * y[k];
      for (int64_t k = 0; k < dim; ++k)
        dx[k] = log ? float(dy[k] - std::exp(double(y[k])) * dot) : float(y[k] * (dy[k] - dot));
      applyOutputScale(out, dx, dim);
      if (dxt.dtype != DType::F32)
        writeF32(dx, dxt, r * dim, dim);
    }
  }
}

void softmaxBackwardOf(KernelContext &c) {
  const TensorRef &yt = c.in[0];
  bool log = attrBool(c, "log", false);
  int64_t axis = axisOf(attrInt(c, "axis", -1), yt.rank()), dim = yt.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < yt.rank(); ++d)
    inner *= yt.shape[d];
  int64_t outer = (dim * inner) != 0 ? yt.size() / (dim * inner) : 0;
  FoldedScale out = c.attrs.foldedScale("output");
  if (inner == 1)
    return lastAxisBackward(c, log, out, outer, dim);
  F32In y(yt), dy(c.in[1]);
  F32Out dx(c.out[0]);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      int64_t base = o * dim * inner + i;
      double dot = 0;
      for (int64_t k = 0; k < dim; ++k)
        dot += log ? dy[base + k * inner] : double(dy[base + k * inner]) * y[base + k * inner];
      for (int64_t k = 0; k < dim; ++k) {
        int64_t at = base + k * inner;
        dx[at] = log ? float(dy[at] - std::exp(double(y[at])) * dot)
                     : float(y[at] * (dy[at] - dot));
      }
    }
  applyOutputScale(out, dx.data(), yt.size());
  dx.commit();
}

/// With an input scale, the operand is the scale step's result.
template <bool Log> void softmax(KernelContext &c) {
  FoldedScale in = c.attrs.foldedScale("input");
  if (!in.present)
    return softmaxOf<Log>(c);
  F32In x(c.in[0]);
  std::vector<float> scaled(x.data(), x.data() + c.in[0].size());
  applyScale(in, scaled.data(), (int64_t)scaled.size());
  KernelContext folded = c;
  folded.in[0] = TensorRef{scaled.data(), DType::F32, c.in[0].shape};
  softmaxOf<Log>(folded);
}

/// softmax_logits_backward: in[0] is the softmax's operand, its result
/// recomputed as the softmax step computed it, then the backward runs on it.
void softmaxLogitsBackward(KernelContext &c) {
  std::vector<float> probabilities(c.in[0].size());
  KernelContext forward = c;
  forward.out = {TensorRef{probabilities.data(), DType::F32, c.in[0].shape}};
  softmax<false>(forward);
  KernelContext backward = c;
  backward.in[0] = forward.out[0];
  softmaxBackwardOf(backward);
}

} // namespace

void addSoftmaxKernels(KernelTable &t) {
  t[Kernel::Softmax] = withRoundedCopy<softmax<false>, 1>;
  t[Kernel::LogSoftmax] = softmax<true>;
  t[Kernel::SoftmaxBackward] = softmaxBackwardOf;
  t[Kernel::SoftmaxLogitsBackward] = softmaxLogitsBackward;
}

} // namespace ampc::rt
