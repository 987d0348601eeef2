// batch_norm (training: batch statistics, moving the running ones; eval: the
// running ones) and its backward. Every statistic is summed in double.
// Channels last (NHWC, the default), x is a [rows, channels] matrix
// (runtime/cuda/Columns.h): one pass sums each channel's moments, the warp
// that totals a channel's sums turns them into its statistics, and one pass
// writes each
// element, a lane per channel so it divides nothing. The moments are taken
// about the channel's first element (x[0, ch]), close to its mean, so one
// pass gives the variance without the cancellation of raw sums of squares;
// the results agree with the CPU's two-pass sums within a rounding.
// Channels first, one thread per channel in the CPU's order. With activation
// relu (docs/runtime.md, "Batch norm activations") the element pass ends in
// the residual add and the relu, and the backward's dy is the relu's backward
// of the incoming gradient, each rounded where the unfused steps rounded.
// (layer_norm: LayerNorm.cu.)
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/Columns.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt::cuda {
namespace {

/// A tensor read element by element: data null where the step has none.
struct Operand {
  const void *data;
  DType dtype;
};

Operand operandOf(const KernelContext &c, size_t input) {
  return input < c.in.size() ? Operand{c.in[input].data, c.in[input].dtype}
                             : Operand{nullptr, DType::F32};
}

/// batch_norm's end: y, or with a relu relu(round(round(y) + residual)).
struct NormEpilogue {
  bool relu;
  Operand residual;
  DType dtype; // the result's
  __device__ float operator()(float y, int64_t i) const {
    if (!relu)
      return y;
    if (residual.data)
      y = roundThrough(y, dtype) + load(residual.data, residual.dtype, i);
    return num::Relu{}.value(roundThrough(y, dtype));
  }
};

NormEpilogue epilogueOf(const KernelContext &c) {
  return {c.attrs.getStr("activation", "none") == "relu", operandOf(c, 5), c.out[0].dtype};
}

/// batch_norm_backward's dy: the incoming gradient, or with a relu its
/// product with the relu's derivative at the relu's result, rounded to the
/// gradient's dtype as the unfused relu backward stored it.
struct Gradient {
  Operand dz, relu;
  __device__ float operator()(int64_t i) const {
    float g = load(dz.data, dz.dtype, i);
    if (!relu.data)
      return g;
    float z = load(relu.data, relu.dtype, i);
    return roundThrough(g * num::Relu{}.derivative(z, z), dz.dtype);
  }
};

/// Batch norm's channels: each spans outer x inner elements.
struct Groups {
  int64_t count, outer, inner, span;
  __device__ int64_t at(int64_t g, int64_t k) const {
    return ((k / inner) * count + g) * inner + k % inner;
  }
};

Groups groupsOf(const KernelContext &c, const TensorRef &x) {
  Groups gr{0, 1, 1, 0};
  bool nhwc = c.attrs.getStr("layout", "NHWC") == "NHWC";
  int64_t axis = nhwc ? x.rank() - 1 : 1;
  gr.count = x.shape[axis];
  for (int64_t d = axis + 1; d < x.rank(); ++d)
    gr.inner *= x.shape[d];
  gr.outer = x.size() / (gr.count * gr.inner);
  gr.span = gr.outer * gr.inner;
  return gr;
}

/// Channels last: a channel's moments about its first element, d = x - x0:
/// the sums of d and d^2 (forward), and of dy and dy * d (backward).
template <int N> struct ShiftedMoments {
  View x;
  Gradient dy;
  int64_t channels;
  struct Column { // the channel's shift loaded once
    const ShiftedMoments &m;
    int64_t ch;
    double shift;
    __device__ void operator()(int64_t r, double *acc) const {
      double d = (double)load(m.x.data, m.x.dtype, r * m.channels + ch) - shift;
      acc[0] += d;
      acc[1] += d * d;
      if constexpr (N == 4) {
        double g = m.dy(r * m.channels + ch);
        acc[2] += g;
        acc[3] += g * d;
      }
    }
  };
  __device__ Column column(int64_t ch) const { return {*this, ch, load(x.data, x.dtype, ch)}; }
};

/// A channel's mean and (biased) variance from its moments about `shift`
/// over `rows` elements: the sums of d and d^2.
__device__ void momentsToStatistics(double sumD, double sumD2, int64_t rows, double shift,
                                    double &mean, double &var) {
  double dm = sumD / rows;
  mean = shift + dm;
  var = max(sumD2 / rows - dm * dm, 0.0);
}

/// Batch norm's per-channel scale a and shift b (y = x * a + b) from the
/// channel's statistics; in training (batch statistics), the running ones
/// move towards them.
struct ChannelAffine {
  View scale, bias, runMean, runVar;
  bool training;
  double eps, momentum;
  int64_t span; // elements a channel spans
  float *a, *b;
  __device__ void operator()(int64_t ch, double mean, double var) const {
    if (training) {
      double unbiased = span > 1 ? var * span / (span - 1) : var;
      float rm = load(runMean.data, runMean.dtype, ch), rv = load(runVar.data, runVar.dtype, ch);
      store(runMean.data, runMean.dtype, ch, float(momentum * rm + (1 - momentum) * mean));
      store(runVar.data, runVar.dtype, ch, float(momentum * rv + (1 - momentum) * unbiased));
    }
    a[ch] = float(load(scale.data, scale.dtype, ch) / sqrt(var + eps));
    b[ch] = float(load(bias.data, bias.dtype, ch) - mean * a[ch]);
  }
};

/// Channels last, training: a channel's statistics from its shifted
/// moments (ShiftedMoments<2>), as the column sums finish.
struct StatisticsFromMoments {
  View x;
  ChannelAffine affine;
  __device__ void operator()(int64_t ch, const double *moments) const {
    double mean, var;
    momentsToStatistics(moments[0], moments[1], affine.span, load(x.data, x.dtype, ch), mean,
                        var);
    affine(ch, mean, var);
  }
};

/// Channels first (training: one thread per channel sums the statistics in
/// the CPU's order), or evaluation (the running statistics).
__global__ void batchStatistics(View x, Groups gr, ChannelAffine affine) {
  AMPC_GRID_STRIDE(ch, gr.count) {
    double mean = 0, var = 0;
    if (affine.training) {
      for (int64_t o = 0; o < gr.outer; ++o) {
        double sum = 0;
        for (int64_t i = 0; i < gr.inner; ++i)
          sum += load(x.data, x.dtype, (o * gr.count + ch) * gr.inner + i);
        mean += sum;
      }
      mean /= gr.span;
      for (int64_t o = 0; o < gr.outer; ++o) {
        double sum = 0;
        for (int64_t i = 0; i < gr.inner; ++i) {
          float v = load(x.data, x.dtype, (o * gr.count + ch) * gr.inner + i);
          sum += (v - mean) * (v - mean);
        }
        var += sum;
      }
      var /= gr.span;
    } else {
      mean = load(affine.runMean.data, affine.runMean.dtype, ch);
      var = load(affine.runVar.data, affine.runVar.dtype, ch);
    }
    affine(ch, mean, var);
  }
}

/// Channels first: y = x * a + b, any layout.
__global__ void batchApply(View x, View y, Groups gr, const float *a, const float *b,
                           NormEpilogue end) {
  AMPC_GRID_STRIDE(e, y.size) {
    int64_t ch = (e / gr.inner) % gr.count;
    store(y.data, y.dtype, e, end(load(x.data, x.dtype, e) * a[ch] + b[ch], e));
  }
}

/// Channels last: y = x * a + b, a lane per channel.
struct ApplyColumns {
  View x, y;
  const float *a, *b;
  int64_t channels;
  NormEpilogue end;
  struct Column {
    View x, y;
    float a, b;
    int64_t at, channels;
    NormEpilogue end;
    __device__ float load(int64_t r) const { return cuda::load(x.data, x.dtype, r * channels + at); }
    __device__ void store(int64_t r, float v) const {
      int64_t i = r * channels + at;
      cuda::store(y.data, y.dtype, i, end(v * a + b, i));
    }
  };
  __device__ Column column(int64_t ch) const { return {x, y, a[ch], b[ch], ch, channels, end}; }
};

void batchNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  bool columns = gr.inner == 1 && gr.outer > 0;
  rows::Columns m = rows::columnsOf(gr.outer, gr.count);
  int64_t partials = columns && c.training ? rows::columnScratch<2>(m) : 0;
  double *scratch = reinterpret_cast<double *>(
      c.device.scratch(partials * sizeof(double) + 2 * gr.count * sizeof(float)));
  float *ab = reinterpret_cast<float *>(scratch + partials);
  View xv = viewOf(x), y = viewOf(c.out[0]);
  ChannelAffine affine{viewOf(c.in[1]),
                       viewOf(c.in[2]),
                       viewOf(c.in[3]),
                       viewOf(c.in[4]),
                       c.training,
                       c.attrs.getF64("epsilon", 1e-5),
                       c.attrs.getF64("momentum", 0.9),
                       gr.span,
                       ab,
                       ab + gr.count};
  if (partials)
    rows::columnSums<2>(c.stream(), m, ShiftedMoments<2>{xv, {}, gr.count}, scratch,
                        StatisticsFromMoments{xv, affine});
  else
    batchStatistics<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(xv, gr, affine);
  NormEpilogue end = epilogueOf(c);
  if (columns)
    rows::eachInColumns(c.stream(), m, ApplyColumns{xv, y, ab, ab + gr.count, gr.count, end});
  else
    batchApply<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(xv, y, gr, ab, ab + gr.count,
                                                                  end);
  launched(c);
}

/// Channels last, per channel: dx = k * dy + q * x + o (k = scale * inv,
/// q = -k * inv * sumDX / rows, o = -k * (sumD / rows - mean * inv * sumDX
/// / rows)), from the shifted moments (ShiftedMoments<4>), as the column
/// sums finish; the scale and bias gradients are sumDX and sumD.
struct BackwardStatistics {
  View x, scale, ds, db;
  int64_t channels, rows;
  double eps;
  double *coefficients;
  __device__ void operator()(int64_t ch, const double *moments) const {
    double mean, var;
    momentsToStatistics(moments[0], moments[1], rows, load(x.data, x.dtype, ch), mean, var);
    // sum(dy * xhat) = inv * (sum(dy * d) - (mean - x0) * sum(dy)), d = x - x0
    double inv = 1.0 / sqrt(var + eps), sumD = moments[2];
    double sumDX = inv * (moments[3] - moments[0] / rows * sumD);
    double k = load(scale.data, scale.dtype, ch) * inv;
    coefficients[ch] = k;
    coefficients[channels + ch] = -k * inv * sumDX / rows;
    coefficients[2 * channels + ch] = -k * (sumD / rows - mean * inv * sumDX / rows);
    store(ds.data, ds.dtype, ch, (float)sumDX);
    store(db.data, db.dtype, ch, (float)sumD);
  }
};

/// Channels last: dx from x and dy, a lane per channel.
struct DxColumns {
  View x;
  Gradient dy;
  View dx;
  const double *coefficients;
  int64_t channels;
  struct Pair {
    float x, dy;
  };
  struct Column {
    View x;
    Gradient dy;
    View dx;
    double k, q, o;
    int64_t at, channels;
    __device__ Pair load(int64_t r) const {
      return {cuda::load(x.data, x.dtype, r * channels + at), dy(r * channels + at)};
    }
    __device__ void store(int64_t r, const Pair &v) const {
      cuda::store(dx.data, dx.dtype, r * channels + at, float(k * v.dy + q * v.x + o));
    }
  };
  __device__ Column column(int64_t ch) const {
    return {x,  dy, dx, coefficients[ch], coefficients[channels + ch],
            coefficients[2 * channels + ch], ch, channels};
  }
};

/// The CPU's channels-first batch norm backward, one thread per channel.
__global__ void groupBackward(View x, Gradient dy, View scale, View dx, View ds, View db,
                              Groups gr, double eps) {
  AMPC_GRID_STRIDE(g, gr.count) {
    double mean = 0, var = 0, sumD = 0, sumDX = 0, dscale = 0, dbias = 0;
    for (int64_t k = 0; k < gr.span; ++k)
      mean += load(x.data, x.dtype, gr.at(g, k));
    mean /= gr.span;
    for (int64_t k = 0; k < gr.span; ++k) {
      float v = load(x.data, x.dtype, gr.at(g, k));
      var += (v - mean) * (v - mean);
    }
    var /= gr.span;
    double inv = 1.0 / sqrt(var + eps);
    for (int64_t k = 0; k < gr.span; ++k) {
      double xhat = (load(x.data, x.dtype, gr.at(g, k)) - mean) * inv,
             d = dy(gr.at(g, k));
      double sc = load(scale.data, scale.dtype, g);
      sumD += d * sc;
      sumDX += d * sc * xhat;
      dscale += d * xhat;
      dbias += d;
    }
    for (int64_t k = 0; k < gr.span; ++k) {
      double xhat = (load(x.data, x.dtype, gr.at(g, k)) - mean) * inv,
             sc = load(scale.data, scale.dtype, g);
      store(dx.data, dx.dtype, gr.at(g, k),
            float(inv * (dy(gr.at(g, k)) * sc - sumD / gr.span -
                         xhat * sumDX / gr.span)));
    }
    store(ds.data, ds.dtype, g, (float)dscale);
    store(db.data, db.dtype, g, (float)dbias);
  }
}

void batchNormBackward(KernelContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  double eps = c.attrs.getF64("epsilon", 1e-5);
  if (gr.count == 0 || x.size() == 0)
    return;
  View xv = viewOf(x), scale = viewOf(c.in[2]), dx = viewOf(c.out[0]), ds = viewOf(c.out[1]),
       db = viewOf(c.out[2]);
  bool relu = c.attrs.getStr("activation", "none") == "relu";
  Gradient dy{operandOf(c, 1), relu ? operandOf(c, 3) : Operand{nullptr, DType::F32}};
  if (gr.inner == 1) { // channels last
    rows::Columns m = rows::columnsOf(gr.outer, gr.count);
    double *coefficients = reinterpret_cast<double *>(
        c.device.scratch((3 * gr.count + rows::columnScratch<4>(m)) * sizeof(double)));
    rows::columnSums<4>(
        c.stream(), m, ShiftedMoments<4>{xv, dy, gr.count}, coefficients + 3 * gr.count,
        BackwardStatistics{xv, scale, ds, db, gr.count, gr.outer, eps, coefficients});
    rows::eachInColumns(c.stream(), m, DxColumns{xv, dy, dx, coefficients, gr.count});
  } else {
    groupBackward<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(xv, dy, scale, dx, ds, db, gr,
                                                                     eps);
  }
  launched(c);
}

} // namespace

void addNormKernels(KernelTable &t) {
  t["batch_norm"] = batchNorm;
  t["batch_norm_backward"] = batchNormBackward;
}

} // namespace ampc::rt::cuda
