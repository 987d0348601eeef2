// layer_norm and its backward: one warp per row, f16/bf16/f32 operands and
// results in any mix (cast folding), statistics summed in double with the
// CPU's per-element formulas; the result's rounded copy (kRoundedCopy) is
// stored in the same pass. Rows of up to 1,024 elements, a multiple of 4,
// are held in registers 4 elements a load (runtime/cuda/kernels/VectorRows.h: one
// read of each operand); other rows go element by element
// (runtime/cuda/kernels/Rows.h). dscale and dbias sum down the rows in two
// deterministic stages (rows::columnSums), four columns a lane where the
// operands can be read a quad at a time.
#include "runtime/cuda/kernels/Columns.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/VectorRows.h"

namespace ampc::rt::cuda {
namespace {

using rows::RowShare;

/// Rows of a layer norm: `inner` elements each (the normalised axes).
struct Shape {
  int64_t rows, inner;
};

Shape shapeOf(const LaunchContext &c) {
  const TensorRef &x = c.in[0];
  int64_t axis = c.attrs.getInt("axis", -1);
  axis = axis < 0 ? axis + x.rank() : axis;
  Shape s{0, 1};
  for (int64_t d = axis; d < x.rank(); ++d)
    s.inner *= x.shape[d];
  s.rows = s.inner ? x.size() / s.inner : 0;
  return s;
}

/// The row's mean and inverse deviation, as the CPU computes them.
template <int PerLane>
__device__ void statistics(const RowShare<PerLane> &x, int64_t n, double eps, double &mean,
                           double &inv) {
  double sum = 0, var = 0;
  x.each([&](int, int64_t, float v) { sum += v; });
  mean = rows::warpSum(sum) / n;
  x.each([&](int, int64_t, float v) { var += (v - mean) * (v - mean); });
  inv = 1.0 / sqrt(rows::warpSum(var) / n + eps);
}

template <int PerLane>
__global__ void layerNormRows(View x, View scale, View bias, ResultAndCopy y, Shape s,
                              double eps) {
  AMPC_ROW_STRIDE(row, s.rows) {
    RowShare<PerLane> xs(x, row * s.inner, s.inner);
    double mean, inv;
    statistics(xs, s.inner, eps, mean, inv);
    xs.each([&](int, int64_t k, float v) {
      y.store(row * s.inner + k, float((v - mean) * inv * load(scale.data, scale.dtype, k) +
                                       load(bias.data, bias.dtype, k)));
    });
  }
}

/// The mean and inverse deviation of a row held in chunks.
template <int Chunks>
__device__ void heldStatistics(const rows::Share<Chunks> &x, int64_t n, double eps, double &mean,
                               double &inv) {
  double sum = 0, var = 0;
  rows::eachHeld<Chunks>(n, [&](int c, int e, int64_t) { sum += x[c][e]; });
  mean = rows::warpSum(sum) / n;
  rows::eachHeld<Chunks>(n, [&](int c, int e, int64_t) {
    var += (x[c][e] - mean) * (x[c][e] - mean);
  });
  inv = 1.0 / sqrt(rows::warpSum(var) / n + eps);
}

template <int Chunks>
__global__ void layerNormHeldRows(View x, View scale, View bias, ResultAndCopy y, Shape s,
                                  double eps) {
  AMPC_ROW_STRIDE(row, s.rows) {
    rows::Share<Chunks> v;
    rows::loadRow<Chunks>(x, row * s.inner, s.inner, v);
    double mean, inv;
    heldStatistics<Chunks>(v, s.inner, eps, mean, inv);
    rows::eachChunk<Chunks>(s.inner, [&](int c) { // scale and bias from the caches
      float sc[rows::kVector], b[rows::kVector];
      rows::loadChunk(scale, 0, c, sc);
      rows::loadChunk(bias, 0, c, b);
#pragma unroll
      for (int e = 0; e < rows::kVector; ++e)
        v[c][e] = float((v[c][e] - mean) * inv * sc[e] + b[e]);
    });
    rows::storeRow<Chunks>(y, row * s.inner, s.inner, v);
  }
}

void layerNorm(LaunchContext &c) {
  Shape s = shapeOf(c);
  if (s.rows == 0)
    return;
  double eps = c.attrs.getF64("epsilon", 1e-5);
  View x = viewOf(c.in[0]), scale = viewOf(c.in[1]), bias = viewOf(c.in[2]);
  ResultAndCopy y = resultAndCopy(c, 1);
  if (rows::vectorRows(s.inner, {x, scale, bias, y.y, y.copy})) {
    rows::withChunks(s.inner, [&](auto chunks) {
      layerNormHeldRows<chunks.value>
          <<<rows::blocksForRows(s.rows), kThreads, 0, c.stream()>>>(x, scale, bias, y, s, eps);
    });
    launched(c);
    return;
  }
  rows::withPerLane(s.inner, [&](auto perLane) {
    layerNormRows<perLane.value>
        <<<rows::blocksForRows(s.rows), kThreads, 0, c.stream()>>>(x, scale, bias, y, s, eps);
  });
  launched(c);
}

/// dx of each row; its mean and inverse deviation kept for the column sums.
template <int PerLane>
__global__ void layerNormBackwardRows(View x, View dy, View scale, ResultAndCopy dx, Shape s,
                                      double eps, double *means, double *invs) {
  AMPC_ROW_STRIDE(row, s.rows) {
    RowShare<PerLane> xs(x, row * s.inner, s.inner), ds(dy, row * s.inner, s.inner);
    double mean, inv;
    statistics(xs, s.inner, eps, mean, inv);
    double sumD = 0, sumDX = 0;
    xs.each([&](int j, int64_t k, float v) {
      double g = ds.at(j, k);
      double sc = load(scale.data, scale.dtype, k), xhat = (v - mean) * inv;
      sumD += g * sc;
      sumDX += g * sc * xhat;
    });
    sumD = rows::warpSum(sumD);
    sumDX = rows::warpSum(sumDX);
    xs.each([&](int j, int64_t k, float v) {
      double g = ds.at(j, k);
      double sc = load(scale.data, scale.dtype, k), xhat = (v - mean) * inv;
      dx.store(row * s.inner + k, float(inv * (g * sc - sumD / s.inner - xhat * sumDX / s.inner)));
    });
    if (rows::lane() == 0) {
      means[row] = mean;
      invs[row] = inv;
    }
  }
}

/// dy's second addend (a residual gradient's sum joined: docs/runtime.md):
/// dy is round(dy + b) to `dtype`, as the add stored it; b.data is null
/// where the step has none.
struct AddendView {
  View b;
  DType dtype;
  /// dy from its two addends g and h.
  __device__ float operator()(float g, float h) const { return roundThrough(g + h, dtype); }
};

/// The fallback's dy: out = round(a + b) as the add stored it, held in f32.
__global__ void sumGradients(View a, AddendView add, float *out) {
  AMPC_GRID_STRIDE(i, a.size) {
    out[i] = add(load(a.data, a.dtype, i), load(add.b.data, add.b.dtype, i));
  }
}

/// layerNormBackwardRows on rows held in chunks, dy with its addend.
template <int Chunks>
__global__ void layerNormBackwardHeldRows(View x, View dy, AddendView add, View scale,
                                          ResultAndCopy dx, Shape s, double eps, double *means,
                                          double *invs) {
  AMPC_ROW_STRIDE(row, s.rows) {
    rows::Share<Chunks> v, g;
    rows::loadRow<Chunks>(x, row * s.inner, s.inner, v);
    rows::loadRow<Chunks>(dy, row * s.inner, s.inner, g);
    if (add.b.data)
      rows::eachChunk<Chunks>(s.inner, [&](int c) {
        float h[rows::kVector];
        rows::loadChunk(add.b, row * s.inner, c, h);
#pragma unroll
        for (int e = 0; e < rows::kVector; ++e)
          g[c][e] = add(g[c][e], h[e]);
      });
    double mean, inv;
    heldStatistics<Chunks>(v, s.inner, eps, mean, inv);
    double sumD = 0, sumDX = 0;
    rows::eachChunk<Chunks>(s.inner, [&](int c) { // the scale from the caches
      float sc[rows::kVector];
      rows::loadChunk(scale, 0, c, sc);
#pragma unroll
      for (int e = 0; e < rows::kVector; ++e) {
        double d = g[c][e], gs = d * sc[e], xhat = (v[c][e] - mean) * inv;
        sumD += gs;
        sumDX += gs * xhat;
      }
    });
    sumD = rows::warpSum(sumD);
    sumDX = rows::warpSum(sumDX);
    rows::eachChunk<Chunks>(s.inner, [&](int c) {
      float sc[rows::kVector];
      rows::loadChunk(scale, 0, c, sc);
#pragma unroll
      for (int e = 0; e < rows::kVector; ++e) {
        double d = g[c][e], xhat = (v[c][e] - mean) * inv;
        v[c][e] = float(inv * (d * sc[e] - sumD / s.inner - xhat * sumDX / s.inner));
      }
    });
    rows::storeRow<Chunks>(dx, row * s.inner, s.inner, v);
    if (rows::lane() == 0) {
      means[row] = mean;
      invs[row] = inv;
    }
  }
}

/// dscale and dbias of the P columns from `col` on: dy * xhat and dy of
/// each row.
template <int P> struct ScaleGradTerms {
  View x, dy;
  AddendView add;
  const double *means, *invs;
  int64_t inner;
  struct Column {
    const ScaleGradTerms &t;
    int64_t col;
    __device__ void operator()(int64_t g, double *acc) const {
      int64_t i = g * t.inner + col;
      Floats<P> xs = loadFloats<P>(t.x.data, t.x.dtype, i),
                dys = loadFloats<P>(t.dy.data, t.dy.dtype, i);
      if (t.add.b.data) {
        Floats<P> bs = loadFloats<P>(t.add.b.data, t.add.b.dtype, i);
#pragma unroll
        for (int w = 0; w < P; ++w)
          dys.v[w] = t.add(dys.v[w], bs.v[w]);
      }
      double mean = t.means[g], inv = t.invs[g];
#pragma unroll
      for (int w = 0; w < P; ++w) {
        double xhat = (xs.v[w] - mean) * inv, d = dys.v[w];
        acc[2 * w] += d * xhat;
        acc[2 * w + 1] += d;
      }
    }
  };
  __device__ Column column(int64_t col) const { return {*this, col}; }
};

/// Stores a column's dscale and dbias, as the column sums finish.
struct StoreScaleGrads {
  View ds, db;
  __device__ void operator()(int64_t col, const double *totals) const {
    store(ds.data, ds.dtype, col, (float)totals[0]);
    store(db.data, db.dtype, col, (float)totals[1]);
  }
};

void layerNormBackward(LaunchContext &c) {
  Shape s = shapeOf(c);
  if (s.rows == 0)
    return;
  double eps = c.attrs.getF64("epsilon", 1e-5);
  View x = viewOf(c.in[0]), dy = viewOf(c.in[1]), scale = viewOf(c.in[2]);
  DyAddend addend = dyAddendOf(c.step, c.attrs);
  AddendView add{addend.operand >= 0 ? viewOf(c.in[addend.operand]) : View{}, addend.dtype};
  ResultAndCopy dx = resultAndCopy(c, 3);
  bool held = rows::vectorRows(s.inner, {x, dy, add.b, scale, dx.y, dx.copy});
  // Rows not held take dy's sum in a pass of its own, into the scratch.
  int64_t sumBytes = add.b.data && !held ? (x.size * 4 + 255) / 256 * 256 : 0;
  // The scale gradients' column sums take four columns a lane where they can.
  int per = rows::columnsPerLane(s.inner, {x, dy, add.b});
  rows::Columns m = rows::columnsOf(s.rows, s.inner, per);
  std::byte *scratch =
      c.device.scratch(sumBytes + (2 * s.rows + rows::columnScratch<2>(m)) * sizeof(double));
  double *means = reinterpret_cast<double *>(scratch + sumBytes), *invs = means + s.rows,
         *partials = invs + s.rows;
  if (sumBytes) {
    float *sum = reinterpret_cast<float *>(scratch);
    sumGradients<<<blocksFor(x.size), kThreads, 0, c.stream()>>>(dy, add, sum);
    dy.data = sum;
    dy.dtype = DType::F32;
    add.b = View{};
  }
  if (held)
    rows::withChunks(s.inner, [&](auto chunks) {
      layerNormBackwardHeldRows<chunks.value>
          <<<rows::blocksForRows(s.rows), kThreads, 0, c.stream()>>>(x, dy, add, scale, dx, s,
                                                                     eps, means, invs);
    });
  else
    rows::withPerLane(s.inner, [&](auto perLane) {
      layerNormBackwardRows<perLane.value>
          <<<rows::blocksForRows(s.rows), kThreads, 0, c.stream()>>>(x, dy, scale, dx, s, eps,
                                                                     means, invs);
    });
  withWidth(per, [&](auto p) {
    constexpr int P = decltype(p)::value;
    rows::columnSums<2, P>(c.stream(), m, ScaleGradTerms<P>{x, dy, add, means, invs, s.inner},
                           partials, StoreScaleGrads{viewOf(c.out[1]), viewOf(c.out[2])});
  });
  launched(c);
}

} // namespace

void addLayerNormKernels(KernelTable &t) {
  t[Kernel::LayerNorm] = layerNorm;
  t[Kernel::LayerNormBackward] = layerNormBackward;
}

} // namespace ampc::rt::cuda
