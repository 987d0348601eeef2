// Elementwise kernels of two operands with numpy broadcasting, their
// backward (broadcast_to, reduce_to, minmax_backward), cast and fill. Each
// element is computed as the CPU computes it (widened to f32, one rounding
// on output; integers as integers), so the results are the CPU's bits.
// reduce_to sums in double; where it sums leading rows (bias gradients) it
// sums chunks of rows in parallel, so its agreement is `rounded`.
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Columns.h"
#include "runtime/cuda/kernels/Quads.h"

namespace ampc::rt::cuda {
namespace {

/// Element i of `out` and the offsets of the elements of a and b it reads.
struct Broadcast {
  int rank;
  int64_t shape[kMaxRank], strideA[kMaxRank], strideB[kMaxRank];
  __device__ void offsets(int64_t i, int64_t &a, int64_t &b) const {
    a = b = 0;
    for (int d = rank - 1; d >= 0; --d) {
      int64_t idx = i % shape[d];
      i /= shape[d];
      a += idx * strideA[d];
      b += idx * strideB[d];
    }
  }
};

Broadcast broadcastOf(const TensorRef &a, const TensorRef &b, const TensorRef &out) {
  if (out.rank() > kMaxRank)
    throw RuntimeError("cuda: tensors of rank above 8 are not supported");
  Broadcast bc{(int)out.rank(), {}, {}, {}};
  for (int d = 0; d < bc.rank; ++d)
    bc.shape[d] = out.shape[d];
  alignedStrides(a.shape, out.shape, bc.strideA);
  alignedStrides(b.shape, out.shape, bc.strideB);
  return bc;
}

using Op = num::BinaryFn;

template <Op op, typename T> __device__ T apply(T a, T b) { return num::Binary<op>{}(a, b); }

template <Op op>
__global__ void floatBinary(View a, View b, View y, Broadcast bc, DType roundA, DType roundB) {
  AMPC_GRID_STRIDE(i, y.size) {
    int64_t ia, ib;
    bc.offsets(i, ia, ib);
    float x = roundThrough(load(a.data, a.dtype, ia), roundA);
    float z = roundThrough(load(b.data, b.dtype, ib), roundB);
    store(y.data, y.dtype, i, apply<op>(x, z));
  }
}

/// W elements of each operand.
template <int W> struct Pair {
  float x[W], z[W];
};

/// Both operands of the result's shape: element i of each, unrolled, with
/// no index arithmetic, four a load where they allow it (Quads.h).
template <Op op>
__global__ void denseFloatBinary(View a, View b, View y, DType roundA, DType roundB, bool quads) {
  quadElements(
      y.size, quads,
      [&](auto w, int64_t i) {
        Pair<decltype(w)::value> v;
        loadUnit<decltype(w)::value>(a.data, a.dtype, i, v.x);
        loadUnit<decltype(w)::value>(b.data, b.dtype, i, v.z);
        return v;
      },
      [&](auto w, int64_t i, auto v) {
#pragma unroll
        for (int k = 0; k < decltype(w)::value; ++k)
          v.x[k] = apply<op>(roundThrough(v.x[k], roundA), roundThrough(v.z[k], roundB));
        storeUnit<decltype(w)::value>(y.data, y.dtype, i, v.x);
      });
}

template <Op op, typename T>
__global__ void intBinary(const T *a, const T *b, T *y, int64_t n, Broadcast bc, int32_t *error,
                          int step) {
  AMPC_GRID_STRIDE(i, n) {
    int64_t ia, ib;
    bc.offsets(i, ia, ib);
    T x = a[ia], z = b[ib];
    if constexpr (op == Op::Div) {
      if (z == 0 || (z == T(-1) && x == (T(1) << (sizeof(T) * 8 - 1)))) {
        reportError(error, step, z == 0 ? kDivisionByZero : kDivisionOverflow);
        y[i] = 0;
        continue;
      }
    }
    y[i] = apply<op>(x, z);
  }
}

template <Op op> void binary(LaunchContext &c) {
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  Broadcast bc = broadcastOf(a, b, y);
  unsigned blocks = blocksFor(y.size());
  if (y.dtype == DType::I32)
    intBinary<op, int32_t><<<blocks, kThreads, 0, c.stream()>>>(
        a.as<int32_t>(), b.as<int32_t>(), y.as<int32_t>(), y.size(), bc, c.device.errorWord(),
        c.index);
  else if (y.dtype == DType::I64)
    intBinary<op, int64_t><<<blocks, kThreads, 0, c.stream()>>>(
        a.as<int64_t>(), b.as<int64_t>(), y.as<int64_t>(), y.size(), bc, c.device.errorWord(),
        c.index);
  else if (y.dtype == DType::I1)
    c.fail("arithmetic on i1 is not supported");
  else if (a.shape == y.shape && b.shape == y.shape) {
    bool quads = quadsFit({viewOf(a), viewOf(b), viewOf(y)});
    denseFloatBinary<op><<<blocksForQuads(y.size(), quads), kThreads, 0, c.stream()>>>(
        viewOf(a), viewOf(b), viewOf(y), c.attrs.roundedInput(0), c.attrs.roundedInput(1),
        quads);
  } else
    floatBinary<op><<<blocks, kThreads, 0, c.stream()>>>(
        viewOf(a), viewOf(b), viewOf(y), bc, c.attrs.roundedInput(0), c.attrs.roundedInput(1));
  launched(c);
}

/// The step's binary function (binaryFnOf), one kernel per function.
void binaryKernel(LaunchContext &c) {
  num::withBinary(*binaryFnOf(c.step.kernel), [&](auto op) { binary<decltype(op)::kFn>(c); });
}

/// A value as the CPU's cast and fill see it: a double, for every dtype.
__device__ double loadDouble(const void *p, DType t, int64_t i) {
  switch (t) {
  case DType::F64: return static_cast<const double *>(p)[i];
  case DType::I32: return static_cast<const int32_t *>(p)[i];
  case DType::I64: return (double)static_cast<const int64_t *>(p)[i];
  case DType::I1: return static_cast<const uint8_t *>(p)[i] ? 1.0 : 0.0;
  default: return load(p, t, i);
  }
}

__device__ void storeDouble(void *p, DType t, int64_t i, double v) {
  switch (t) {
  case DType::F64: static_cast<double *>(p)[i] = v; return;
  case DType::I32: static_cast<int32_t *>(p)[i] = (int32_t)v; return;
  case DType::I64: static_cast<int64_t *>(p)[i] = (int64_t)v; return;
  case DType::I1: static_cast<uint8_t *>(p)[i] = v != 0.0; return;
  case DType::F8E4M3: static_cast<uint8_t *>(p)[i] = num::toFp8(v, num::kE4M3); return;
  case DType::F8E5M2: static_cast<uint8_t *>(p)[i] = num::toFp8(v, num::kE5M2); return;
  default: store(p, t, i, (float)v);
  }
}

bool isF32OrNarrower(DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; }

/// Casts that involve an integer, f64 or i1 type (floatCastKernel: the rest).
__global__ void castKernel(View x, View y) {
  bool ints = (x.dtype == DType::I32 || x.dtype == DType::I64) &&
              (y.dtype == DType::I32 || y.dtype == DType::I64);
  AMPC_GRID_STRIDE(i, y.size) {
    if (ints && y.dtype == DType::I64)
      static_cast<int64_t *>(y.data)[i] = loadIndex(x.data, x.dtype, i);
    else if (ints)
      static_cast<int32_t *>(y.data)[i] = (int32_t)loadIndex(x.data, x.dtype, i);
    else
      storeDouble(y.data, y.dtype, i, loadDouble(x.data, x.dtype, i));
  }
}

/// f16, bf16 and f32 to one another, unrolled, four a load where the
/// tensors allow it.
__global__ void floatCastKernel(View x, View y, bool quads) {
  quadMap(x, y, quads, [](float v) { return v; });
}

void cast(LaunchContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  if (x.dtype == y.dtype) {
    if (x.data != y.data)
      AMPC_CUDA_CHECK(cudaMemcpyAsync(y.data, x.data, y.bytes(), cudaMemcpyDeviceToDevice,
                                      c.stream()));
    return;
  }
  if (isF32OrNarrower(x.dtype) && isF32OrNarrower(y.dtype)) {
    bool quads = quadsFit({viewOf(x), viewOf(y)});
    floatCastKernel<<<blocksForQuads(y.size(), quads), kThreads, 0, c.stream()>>>(
        viewOf(x), viewOf(y), quads);
  } else
    castKernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(viewOf(x), viewOf(y));
  launched(c);
}

__global__ void fillKernel(View y, double value) {
  AMPC_GRID_STRIDE(i, y.size) { storeDouble(y.data, y.dtype, i, value); }
}

void fill(LaunchContext &c) {
  fillKernel<<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.out[0]), c.attrs.getF64("value", 0.0));
  launched(c);
}

/// y (shape `big`) = x broadcast.
__global__ void broadcastKernel(View x, View y, Broadcast bc) {
  AMPC_GRID_STRIDE(i, y.size) {
    int64_t ix, unused;
    bc.offsets(i, ix, unused);
    store(y.data, y.dtype, i, load(x.data, x.dtype, ix));
  }
}

void broadcastTo(LaunchContext &c) {
  Broadcast bc = broadcastOf(c.in[0], c.in[0], c.out[0]);
  broadcastKernel<<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.out[0]), bc);
  launched(c);
}

/// y = x summed onto y's (broadcast) shape: each output element sums, in
/// double and in row-major order, the elements of x that broadcast from it,
/// as the CPU does.
struct Reduction {
  int rank;
  int64_t shape[kMaxRank];      // x's shape
  bool kept[kMaxRank];          // dimensions y keeps
  int64_t xStride[kMaxRank];    // x's row-major strides
};

__global__ void reduceToKernel(View x, View y, Reduction r) {
  AMPC_GRID_STRIDE(j, y.size) {
    // x's coordinates on the kept dimensions, from y's index j.
    int64_t base = 0, rest = j, count = 1;
    for (int d = r.rank - 1; d >= 0; --d) {
      if (r.kept[d]) {
        base += (rest % r.shape[d]) * r.xStride[d];
        rest /= r.shape[d];
      } else {
        count *= r.shape[d];
      }
    }
    double sum = 0;
    for (int64_t k = 0; k < count; ++k) { // reduced coordinates, row-major
      int64_t at = base, left = k;
      for (int d = r.rank - 1; d >= 0; --d)
        if (!r.kept[d]) {
          at += (left % r.shape[d]) * r.xStride[d];
          left /= r.shape[d];
        }
      sum += load(x.data, x.dtype, at);
    }
    store(y.data, y.dtype, j, (float)sum);
  }
}

/// x[row * cols + col] of a [rows, cols] view of x.
struct ColumnTerm {
  View x;
  int64_t cols;
  struct Column {
    View x;
    int64_t cols, col;
    __device__ void operator()(int64_t row, double *acc) const {
      acc[0] += load(x.data, x.dtype, row * cols + col);
    }
  };
  __device__ Column column(int64_t col) const { return {x, cols, col}; }
};

/// Stores a column's sum, as the column sums finish.
struct StoreTotal {
  View y;
  __device__ void operator()(int64_t col, const double *totals) const {
    store(y.data, y.dtype, col, (float)totals[0]);
  }
};

} // namespace

void sumColumns(LaunchContext &c, const TensorRef &x, const TensorRef &y) {
  rows::Columns m = rows::columnsOf(x.size() / y.size(), y.size());
  double *partials = reinterpret_cast<double *>(
      c.device.scratch(rows::columnScratch<1>(m) * sizeof(double)));
  rows::columnSums<1>(c.stream(), m, ColumnTerm{viewOf(x), y.size()}, partials,
                      StoreTotal{viewOf(y)});
  launched(c);
}

namespace {

/// The rows when y keeps a suffix of x's dimensions and sums all the ones
/// before it (a bias gradient: [batch, seq, hidden] onto [hidden]), so x is
/// a [rows, y.size] matrix summed down its columns; 0 otherwise.
int64_t leadingRows(const TensorRef &x, const TensorRef &y) {
  size_t off = x.rank() - y.rank();
  int64_t rows = 1;
  bool keeping = false;
  for (size_t d = 0; d < x.rank(); ++d) {
    bool kept = d >= off && y.shape[d - off] != 1;
    if (x.shape[d] == 1)
      continue;
    if (!kept && keeping)
      return 0;
    keeping |= kept;
    if (!kept)
      rows *= x.shape[d];
  }
  return rows;
}

void reduceTo(LaunchContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  if (x.rank() > kMaxRank)
    c.fail("tensors of rank above 8 are not supported on cuda");
  // The common case, rows of x summed onto one row: many rows in parallel in
  // two deterministic stages (runtime/cuda/kernels/Rows.h) instead of one thread per
  // output element walking every row.
  if (int64_t rows = leadingRows(x, y); rows > 1 && y.size() > 0) {
    sumColumns(c, x, y);
    return;
  }
  Reduction r{(int)x.rank(), {}, {}, {}};
  size_t off = x.rank() - y.rank();
  int64_t s = 1;
  for (int64_t d = x.rank() - 1; d >= 0; --d) {
    r.shape[d] = x.shape[d];
    r.kept[d] = d >= (int64_t)off && y.shape[d - off] != 1;
    r.xStride[d] = s;
    s *= x.shape[d];
  }
  reduceToKernel<<<blocksFor(y.size()), kThreads, 0, c.stream()>>>(viewOf(x), viewOf(y), r);
  launched(c);
}

template <bool Max> __global__ void minmaxBackwardKernel(View a, View b, View dy, View da,
                                                           View db, Broadcast bc) {
  AMPC_GRID_STRIDE(i, dy.size) {
    int64_t ia, ib;
    bc.offsets(i, ia, ib);
    float x = load(a.data, a.dtype, ia), z = load(b.data, b.dtype, ib), g = load(dy.data, dy.dtype, i);
    bool first = Max ? x >= z : x <= z;
    store(da.data, da.dtype, i, first ? g : 0.0f);
    store(db.data, db.dtype, i, first ? 0.0f : g);
  }
}

void minmaxBackward(LaunchContext &c) {
  Broadcast bc = broadcastOf(c.in[0], c.in[1], c.in[2]);
  auto launch = minmaxTakesMax(c.attrs) ? minmaxBackwardKernel<true>
                                                     : minmaxBackwardKernel<false>;
  launch<<<blocksFor(c.in[2].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.out[0]), viewOf(c.out[1]), bc);
  launched(c);
}

} // namespace

void addElementwiseKernels(KernelTable &t) {
  t.addEach(isBinaryKernel, binaryKernel);
  t[Kernel::Cast] = cast;
  t[Kernel::Fill] = fill;
  t[Kernel::BroadcastTo] = broadcastTo;
  t[Kernel::ReduceTo] = reduceTo;
  t[Kernel::MinmaxBackward] = minmaxBackward;
}

} // namespace ampc::rt::cuda
