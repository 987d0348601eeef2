// Elementwise kernels of two operands with numpy broadcasting, their
// backward (broadcast_to, reduce_to, minmax_backward), cast and fill.
#include <algorithm>
#include <cmath>

#include "runtime/core/StepVariants.h"
#include "runtime/cpu/kernels/F32Chunks.h"

namespace ampc::rt {
namespace {

template <typename T, typename Op>
void broadcastLoop(const T *a, const std::vector<int64_t> &as, const T *b,
                   const std::vector<int64_t> &bs, T *out, const std::vector<int64_t> &os,
                   Op op) {
  int64_t n = numElements(os);
  if (as == os && bs == os) {
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], b[i]);
    return;
  }
  if (os.empty() || n == 0) {
    if (n)
      out[0] = op(a[0], b[0]);
    return;
  }
  size_t rank = os.size();
  std::vector<int64_t> sa = broadcastStrides(as, rank), sb = broadcastStrides(bs, rank);
  int64_t inner = os.back(), outer = n / inner, ia = sa.back(), ib = sb.back();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, offA = 0, offB = 0;
    for (int64_t d = (int64_t)rank - 2; d >= 0; --d) {
      int64_t idx = rest % os[d];
      rest /= os[d];
      offA += idx * sa[d];
      offB += idx * sb[d];
    }
    T *po = out + o * inner;
    for (int64_t i = 0; i < inner; ++i)
      po[i] = op(a[offA + i * ia], b[offB + i * ib]);
  }
}

/// Whether `small` broadcasts to `shape` as one row repeated: its dims past
/// leading 1s are `shape`'s last ones, so element i of the result takes
/// element i % size of it.
bool repeatsOverRows(const std::vector<int64_t> &small, const std::vector<int64_t> &shape) {
  size_t lead = 0;
  while (lead < small.size() && small[lead] == 1)
    ++lead;
  size_t kept = small.size() - lead;
  return kept <= shape.size() &&
         std::equal(small.begin() + lead, small.end(), shape.end() - kept);
}

/// out[i] = op(a[i], b[i]) over one chunk.
template <typename Op>
AMPC_VECTOR_CLONES void sameShape(Op op, const float *a, const float *b, float *out, int64_t n) {
#pragma omp simd
  for (int64_t i = 0; i < n; ++i)
    out[i] = op(a[i], b[i]);
}

template <typename Op> void binary(KernelContext &c, Op op) {
  const TensorRef &a = c.in[0], &b = c.in[1], &o = c.out[0];
  switch (o.dtype) {
  case DType::I32:
    return broadcastLoop(a.as<int32_t>(), a.shape, b.as<int32_t>(), b.shape, o.as<int32_t>(),
                         o.shape, op);
  case DType::I64:
    return broadcastLoop(a.as<int64_t>(), a.shape, b.as<int64_t>(), b.shape, o.as<int64_t>(),
                         o.shape, op);
  case DType::I1:
    c.fail("arithmetic on i1 is not supported");
  default: {
    if (a.shape == o.shape && b.shape == o.shape)
      return forF32Chunks<2>({F32Source{&a, roundedInput(c, 0)}, F32Source{&b, roundedInput(c, 1)}},
                             o, [&](const float *const *in, float *out, int64_t, int64_t n) {
                               sameShape(op, in[0], in[1], out, n);
                             });
    if (a.shape == o.shape && repeatsOverRows(b.shape, o.shape)) { // a bias
      F32In fb(b, roundedInput(c, 1));
      int64_t width = std::max<int64_t>(b.size(), 1);
      return forF32Chunks<1>({F32Source{&a, roundedInput(c, 0)}}, o,
                             [&](const float *const *in, float *out, int64_t at, int64_t n) {
                               for (int64_t i = 0, col = at % width; i < n; col = 0) {
                                 int64_t run = std::min(n - i, width - col);
                                 sameShape(op, in[0] + i, fb.data() + col, out + i, run);
                                 i += run;
                               }
                             });
    }
    F32In fa(a, roundedInput(c, 0)), fb(b, roundedInput(c, 1));
    F32Out fo(o);
    broadcastLoop(fa.data(), a.shape, fb.data(), b.shape, fo.data(), o.shape, op);
    fo.commit();
  }
  }
}

/// Integer division's faults, found before any element is written.
void checkIntegerDivision(KernelContext &c) {
  bool minusOne = false, smallest = false;
  double least = c.out[0].dtype == DType::I64 ? -0x1p63 : -0x1p31;
  for (int64_t i = 0; i < c.in[1].size(); ++i) {
    double d = loadElement(c.in[1].data, c.in[1].dtype, i);
    if (d == 0)
      c.fail("integer division by zero");
    minusOne |= d == -1;
  }
  for (int64_t i = 0; minusOne && i < c.in[0].size(); ++i)
    smallest |= loadElement(c.in[0].data, c.in[0].dtype, i) == least;
  if (minusOne && smallest) // the most negative integer over -1 does not fit
    c.fail("integer division overflows");
}

/// The step's binary function (binaryFnOf), a loop per function.
void binaryKernel(KernelContext &c) {
  num::BinaryFn fn = *binaryFnOf(c.step.kernel);
  if (fn == num::BinaryFn::Div && !isFloat(c.out[0].dtype))
    checkIntegerDivision(c);
  num::withBinary(fn, [&](auto op) { binary(c, op); });
}

void cast(KernelContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  auto small = [](DType t) { return isComputeFloat(t) || isFp8(t); };
  if (x.dtype == y.dtype) {
    copyBytes(x, y);
  } else if (small(x.dtype) && y.dtype == DType::F32) {
    toF32(x.data, x.dtype, y.as<float>(), y.size()); // one pass, no copy
  } else if (x.dtype == DType::F32 && small(y.dtype)) {
    fromF32(x.as<float>(), y.data, y.dtype, y.size());
  } else if (small(x.dtype) && small(y.dtype)) {
    F32In fx(x);
    fromF32(fx.data(), y.data, y.dtype, y.size());
  } else if ((x.dtype == DType::I64 || x.dtype == DType::I32) &&
             (y.dtype == DType::I64 || y.dtype == DType::I32)) {
    for (int64_t i = 0; i < y.size(); ++i)
      if (y.dtype == DType::I64)
        y.as<int64_t>()[i] = x.dtype == DType::I32 ? x.as<int32_t>()[i] : x.as<int64_t>()[i];
      else
        y.as<int32_t>()[i] = x.dtype == DType::I32 ? x.as<int32_t>()[i] : (int32_t)x.as<int64_t>()[i];
  } else {
    convertElements(x.data, x.dtype, y.data, y.dtype, y.size());
  }
}

void fill(KernelContext &c) {
  const TensorRef &y = c.out[0];
  double v = attrF64(c, "value", 0.0);
  for (int64_t i = 0; i < y.size(); ++i)
    storeElement(y.data, y.dtype, i, v);
}

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

void reduceTo(KernelContext &c) { sumOnto(c.in[0], c.out[0]); }

void minMaxBackward(KernelContext &c) {
  bool max = minmaxTakesMax(c.attrs);
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

/// The elements of y's shape, where it is x's trailing dimensions (leading
/// 1s aside): then y sums x's rows of that many columns. 0 otherwise.
int64_t trailingWidth(const std::vector<int64_t> &xShape, const std::vector<int64_t> &yShape) {
  size_t lead = 0;
  while (lead < yShape.size() && yShape[lead] == 1)
    ++lead;
  size_t kept = yShape.size() - lead;
  if (kept > xShape.size() ||
      !std::equal(yShape.begin() + lead, yShape.end(), xShape.end() - kept))
    return 0;
  return numElements(yShape);
}

/// acc[j] += row[j] down `rows` rows of `stride` floats: each column in
/// row order, as the broadcast walk adds them.
AMPC_VECTOR_CLONES void addRows(const float *x, int64_t rows, int64_t stride, int64_t width,
                                double *acc) {
  for (int64_t r = 0; r < rows; ++r) {
    const float *row = x + r * stride;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j)
      acc[j] += row[j];
  }
}

} // namespace

void sumOnto(const TensorRef &x, const TensorRef &y) {
  F32In fx(x);
  std::vector<double> acc(y.size(), 0.0);
  int64_t width = trailingWidth(x.shape, y.shape);
  if (width > 0) { // bias gradients: column blocks on the threads, rows in order
    constexpr int64_t kBlock = 128;
    int64_t rows = x.size() / width, blocks = (width + kBlock - 1) / kBlock;
    const float *px = fx.data();
#pragma omp parallel for if (x.size() > kParallelGrain)
    for (int64_t b = 0; b < blocks; ++b)
      addRows(px + b * kBlock, rows, width, std::min(kBlock, width - b * kBlock),
              acc.data() + b * kBlock);
  } else {
    forEachBroadcast(x.shape, y.shape, [&](int64_t i, int64_t j) { acc[j] += fx[i]; });
  }
  F32Out fy(y);
  for (size_t i = 0; i < acc.size(); ++i)
    fy[i] = float(acc[i]);
  fy.commit();
}

void addElementwiseKernels(KernelTable &t) {
  t.addEach(isBinaryKernel, binaryKernel);
  t[Kernel::MinmaxBackward] = minMaxBackward;
  t[Kernel::BroadcastTo] = broadcastTo;
  t[Kernel::ReduceTo] = reduceTo;
  t[Kernel::Cast] = cast;
  t[Kernel::Fill] = fill;
}

} // namespace ampc::rt
