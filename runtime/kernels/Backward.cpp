// Backward kernels of elementwise ops, broadcasting, softmax, losses,
// embedding and slice. Computed in f32 (sums in f64), rounded on output.
#include <cmath>

#include "runtime/kernels/Exp.h"
#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

/// For each element of `big` (row-major), the index of the element of
/// `small` it broadcasts from (numpy rules, `small` right-aligned).
template <typename F>
void forEachBroadcast(const std::vector<int64_t> &big, const std::vector<int64_t> &small, F f) {
  size_t rank = big.size(), off = rank - small.size();
  std::vector<int64_t> stride(rank, 0), own = stridesOf(small);
  for (size_t i = 0; i < small.size(); ++i)
    if (small[i] != 1)
      stride[off + i] = own[i];
  std::vector<int64_t> idx(rank, 0);
  int64_t at = 0, n = numElements(big);
  for (int64_t i = 0; i < n; ++i) {
    f(i, at);
    for (int64_t d = (int64_t)rank - 1; d >= 0; --d) {
      at += stride[d];
      if (++idx[d] < big[d])
        break;
      at -= stride[d] * big[d];
      idx[d] = 0;
    }
  }
}

void broadcastTo(KernelContext &c) {
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  forEachBroadcast(c.out[0].shape, c.in[0].shape, [&](int64_t i, int64_t j) { y[i] = x[j]; });
  y.commit();
}

void reduceTo(KernelContext &c) {
  F32In x(c.in[0]);
  std::vector<double> acc(c.out[0].size(), 0.0);
  forEachBroadcast(c.in[0].shape, c.out[0].shape, [&](int64_t i, int64_t j) { acc[j] += x[i]; });
  F32Out y(c.out[0]);
  for (size_t i = 0; i < acc.size(); ++i)
    y[i] = float(acc[i]);
  y.commit();
}

/// dx = dy * f'(x, y) over all elements, in parallel.
template <typename D> void applyDerivative(KernelContext &c, D derivative) {
  F32In x(c.in[0]), y(c.in[1]), dy(c.in[2]);
  F32Out dx(c.out[0]);
  const float *px = x.data(), *py = y.data(), *pd = dy.data();
  float *out = dx.data();
  int64_t n = c.out[0].size();
  // simd: derivatives like relu's become vector selects instead of
  // data-dependent branches. Element i is read before it is written, so the
  // planner may give dx the memory of x, y or dy.
#pragma omp parallel for simd if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    out[i] = pd[i] * derivative(px[i], py[i]);
  dx.commit();
}

void unaryBackward(KernelContext &c) {
  // The function is resolved once; each gets its own loop.
  std::string fn = attrStr(c, "fn", "");
  float e = (float)attrF64(c, "exponent", 1.0);
  if (fn == "relu")
    return applyDerivative(c, [](float x, float) { return x > 0.0f ? 1.0f : 0.0f; });
  if (fn == "tanh")
    return applyDerivative(c, [](float, float y) { return 1.0f - y * y; });
  if (fn == "sigmoid")
    return applyDerivative(c, [](float, float y) { return y * (1.0f - y); });
  if (fn == "abs")
    return applyDerivative(c, [](float x, float) {
      return x > 0.0f ? 1.0f : (x < 0.0f ? -1.0f : 0.0f);
    });
  if (fn == "exp")
    return applyDerivative(c, [](float, float y) { return y; });
  if (fn == "log")
    return applyDerivative(c, [](float x, float) { return 1.0f / x; });
  if (fn == "sqrt")
    return applyDerivative(c, [](float, float y) { return 0.5f / y; });
  if (fn == "rsqrt")
    return applyDerivative(c, [](float, float y) { return -0.5f * y * y * y; });
  if (fn == "square")
    return applyDerivative(c, [](float x, float) { return 2.0f * x; });
  if (fn == "pow")
    return applyDerivative(c, [e](float x, float) { return e * std::pow(x, e - 1.0f); });
  if (fn == "gelu")
    return applyDerivative(c, [](float x, float) {
      float cdf = 0.5f * (1.0f + std::erf(x * 0.70710678f));
      return cdf + x * 0.39894228f * std::exp(-0.5f * x * x);
    });
  if (fn == "gelu_tanh")
    return applyDerivative(c, [](float x, float) {
      float u = 0.7978845608f * (x + 0.044715f * x * x * x), t = std::tanh(u);
      return 0.5f * (1.0f + t) +
             0.5f * x * (1.0f - t * t) * 0.7978845608f * (1.0f + 3.0f * 0.044715f * x * x);
    });
  c.fail("unknown function '" + fn + "'");
}

void minMaxBackward(KernelContext &c) {
  bool max = attrStr(c, "fn", "max") == "max";
  const std::vector<int64_t> &shape = c.in[2].shape;
  F32In a(c.in[0]), b(c.in[1]), dy(c.in[2]);
  std::vector<float> ab(c.in[2].size()), bb(ab.size());
  forEachBroadcast(shape, c.in[0].shape, [&](int64_t i, int64_t j) { ab[i] = a[j]; });
  forEachBroadcast(shape, c.in[1].shape, [&](int64_t i, int64_t j) { bb[i] = b[j]; });
  F32Out da(c.out[0]), db(c.out[1]);
  for (size_t i = 0; i < ab.size(); ++i) {
    bool first = max ? ab[i] >= bb[i] : ab[i] <= bb[i];
    da[i] = first ? dy[i] : 0.0f;
    db[i] = first ? 0.0f : dy[i];
  }
  da.commit();
  db.commit();
}

void softmaxBackward(KernelContext &c) {
  const TensorRef &yt = c.in[0];
  bool log = attrBool(c, "log", false);
  int64_t axis = axisOf(attrInt(c, "axis", -1), yt.rank()), dim = yt.shape[axis], inner = 1;
  for (int64_t d = axis + 1; d < yt.rank(); ++d)
    inner *= yt.shape[d];
  int64_t outer = (dim * inner) != 0 ? yt.size() / (dim * inner) : 0;
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
  dx.commit();
}

float scalarOf(const TensorRef &t) {
  float v;
  toF32(t.data, t.dtype, &v, 1);
  return v;
}

void softmaxCrossEntropyBackward(KernelContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  const TensorRef &out = c.out[0];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  double factor = rows ? scalarOf(c.in[2]) / double(rows) : 0.0;
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
  double factor = n ? 2.0 * scalarOf(c.in[2]) / double(n) : 0.0;
  F32In p(c.in[0]), t(c.in[1]);
  F32Out dx(c.out[0]);
  for (int64_t i = 0; i < n; ++i)
    dx[i] = float((double(p[i]) - t[i]) * factor);
  dx.commit();
}

void embeddingBackward(KernelContext &c) {
  const TensorRef &ids = c.in[0];
  int64_t vocab = c.out[0].dim(0), dim = c.out[0].dim(1);
  F32In dy(c.in[1]);
  std::vector<float> acc(c.out[0].size(), 0.0f);
  for (int64_t i = 0; i < ids.size(); ++i) {
    int64_t id = ids.dtype == DType::I64 ? ids.as<int64_t>()[i] : ids.as<int32_t>()[i];
    if (id < 0 || id >= vocab)
      c.fail("id " + std::to_string(id) + " is out of range [0, " + std::to_string(vocab) + ")");
    for (int64_t k = 0; k < dim; ++k)
      acc[id * dim + k] += dy[i * dim + k];
  }
  fromF32(acc.data(), c.out[0].data, c.out[0].dtype, acc.size());
}

void sliceBackward(KernelContext &c) {
  const TensorRef &dy = c.in[0], &dx = c.out[0];
  std::memset(dx.data, 0, dx.bytes());
  size_t es = dtypeSize(dx.dtype), row = (dy.rank() ? dy.shape.back() : 1) * es;
  forEachSliceRow(dx.shape, dy.shape, sliceBegin(c, dx.shape), [&](int64_t r, int64_t offset) {
    std::memcpy(static_cast<char *>(dx.data) + offset * es,
                static_cast<const char *>(dy.data) + r * row, row);
  });
}

} // namespace

void addBackwardKernels(KernelTable &t) {
  t["broadcast_to"] = broadcastTo;
  t["reduce_to"] = reduceTo;
  t["unary_backward"] = unaryBackward;
  t["minmax_backward"] = minMaxBackward;
  t["softmax_backward"] = softmaxBackward;
  t["softmax_cross_entropy_backward"] = softmaxCrossEntropyBackward;
  t["mse_loss_backward"] = mseLossBackward;
  t["embedding_backward"] = embeddingBackward;
  t["slice_backward"] = sliceBackward;
}

} // namespace ampc::rt
