// batch_norm (training: batch statistics, moving the running ones; eval: the
// running ones) and its backward. Every statistic is summed in double (a
// lane's runs of rows in f32 first, channels last: Columns.h).
// Channels last (NHWC, the default), x is a [rows, channels] matrix
// (runtime/cuda/kernels/Columns.h): one pass sums each channel's moments, the warp
// that totals a channel's sums turns them into its statistics, and one pass
// writes each element, a lane per channel (four channels, one load per
// operand, where every operand can be read a quad at a time: Quads.h), so it
// divides nothing. The moments are taken about the channel's first element
// (x[0, ch]), close to its mean, so one pass gives the variance without the
// cancellation of raw sums of squares; the results agree with the CPU's
// two-pass sums within a rounding. Channels first: NormChannelsFirst.cu.
// With activation relu (docs/runtime.md, "Batch norm activations") the
// element pass ends in the residual add and the relu, and the backward's dy
// is the relu's backward of the incoming gradient, each rounded where the
// unfused steps rounded. (layer_norm: NormLayer.cu.)
#include "runtime/cuda/kernels/Columns.h"
#include "runtime/cuda/kernels/NormParts.h"

namespace ampc::rt::cuda {
namespace {

using namespace norm;

/// Channels last: a channel's moments about its first element, d = x - x0:
/// the sums of d and d^2 (forward), and of dy and dy * d (backward); P
/// channels a lane (Columns.h), each lane's rows in f32 runs (Column::Run).
template <int N, int P> struct ShiftedMoments {
  View x;
  Gradient dy;
  int64_t channels;
  struct Column { // the channels' shifts loaded once
    using Run = float;
    const ShiftedMoments &m;
    int64_t ch;
    Floats<P> shift;
    __device__ void operator()(int64_t r, float *acc) const {
      int64_t i = r * m.channels + ch;
      Floats<P> xs = loadFloats<P>(m.x.data, m.x.dtype, i), g;
      if constexpr (N == 4)
        g = m.dy.template at<P>(i);
#pragma unroll
      for (int w = 0; w < P; ++w) {
        float d = xs.v[w] - shift.v[w];
        acc[w * N] += d;
        acc[w * N + 1] += d * d;
        if constexpr (N == 4) {
          acc[w * N + 2] += g.v[w];
          acc[w * N + 3] += g.v[w] * d;
        }
      }
    }
  };
  __device__ Column column(int64_t ch) const {
    return {*this, ch, loadFloats<P>(x.data, x.dtype, ch)};
  }
};

/// A channel's mean and (biased) variance from its moments about `shift`
/// over `rows` elements: the sums of d and d^2.
__device__ void momentsToStatistics(double sumD, double sumD2, int64_t rows, double shift,
                                    double &mean, double &var) {
  double dm = sumD / rows;
  mean = shift + dm;
  var = max(sumD2 / rows - dm * dm, 0.0);
}

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

/// Channels last: y = x * a + b, P channels a lane.
template <int P> struct ApplyColumns {
  View x, y;
  const float *a, *b;
  int64_t channels;
  NormEpilogue end;
  struct Value {
    Floats<P> x, residual;
  };
  struct Column {
    View x, y;
    float a[P], b[P];
    int64_t at, channels;
    NormEpilogue end;
    __device__ Value load(int64_t r) const {
      int64_t i = r * channels + at;
      return {loadFloats<P>(x.data, x.dtype, i), loadOperand<P>(end.residual, i)};
    }
    __device__ void store(int64_t r, const Value &v) const {
      float out[P];
#pragma unroll
      for (int w = 0; w < P; ++w)
        out[w] = end(v.x.v[w] * a[w] + b[w], v.residual.v[w]);
      storeUnit<P>(y.data, y.dtype, r * channels + at, out);
    }
  };
  __device__ Column column(int64_t ch) const {
    Column c{x, y, {}, {}, ch, channels, end};
#pragma unroll
    for (int w = 0; w < P; ++w)
      c.a[w] = a[ch + w], c.b[w] = b[ch + w];
    return c;
  }
};

void batchNorm(LaunchContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  bool columns = gr.inner == 1 && gr.outer > 0;
  NormEpilogue end = epilogueOf(c);
  int per = rows::columnsPerLane(
      gr.count, {operandOf(c, 0), Operand{c.out[0].data, c.out[0].dtype}, end.residual});
  rows::Columns m = rows::columnsOf(gr.outer, gr.count, per);
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
  if (!partials) // channels first, or evaluation
    queueGroupStatistics(c.stream(), xv, gr, affine);
  if (!columns) {
    queueGroupApply(c.stream(), xv, y, gr, ab, ab + gr.count, end);
  } else {
    withWidth(per, [&](auto p) {
      constexpr int P = decltype(p)::value;
      if (partials)
        rows::columnSums<2, P>(c.stream(), m, ShiftedMoments<2, P>{xv, {}, gr.count}, scratch,
                               StatisticsFromMoments{xv, affine});
      rows::eachInColumns(c.stream(), m,
                          ApplyColumns<P>{xv, y, ab, ab + gr.count, gr.count, end});
    });
  }
  launched(c);
}

/// Channels last, per channel: dx = k * dy + q * (x - x0) + o (k = scale *
/// inv, q = -k * inv * sumDX / rows, o = q * (x0 - mean) - k * sumD / rows,
/// x0 the channel's first element, the moments' shift), from the shifted
/// moments (ShiftedMoments<4>), as the column sums finish; the scale and
/// bias gradients are sumDX and sumD. The element pass computes in f32:
/// x - x0 first, so q's term does not cancel against o.
struct BackwardStatistics {
  View x, scale, ds, db;
  int64_t channels, rows;
  double eps;
  double *coefficients;
  __device__ void operator()(int64_t ch, const double *moments) const {
    double mean, var, shift = load(x.data, x.dtype, ch);
    momentsToStatistics(moments[0], moments[1], rows, shift, mean, var);
    // sum(dy * xhat) = inv * (sum(dy * d) - (mean - x0) * sum(dy)), d = x - x0
    double inv = 1.0 / sqrt(var + eps), sumD = moments[2];
    double sumDX = inv * (moments[3] - moments[0] / rows * sumD);
    double k = load(scale.data, scale.dtype, ch) * inv, q = -k * inv * sumDX / rows;
    coefficients[ch] = k;
    coefficients[channels + ch] = q;
    coefficients[2 * channels + ch] = q * (shift - mean) - k * sumD / rows;
    store(ds.data, ds.dtype, ch, (float)sumDX);
    store(db.data, db.dtype, ch, (float)sumD);
  }
};

/// Channels last: dx from x and dy, P channels a lane, in f32.
template <int P> struct DxColumns {
  View x;
  Gradient dy;
  View dx;
  const double *coefficients;
  int64_t channels;
  struct Pair {
    Floats<P> x, dy;
  };
  struct Column {
    View x;
    Gradient dy;
    View dx;
    float k[P], q[P], o[P];
    Floats<P> shift;
    int64_t at, channels;
    __device__ Pair load(int64_t r) const {
      int64_t i = r * channels + at;
      return {loadFloats<P>(x.data, x.dtype, i), dy.template at<P>(i)};
    }
    __device__ void store(int64_t r, const Pair &v) const {
      float out[P];
#pragma unroll
      for (int w = 0; w < P; ++w)
        out[w] = k[w] * v.dy.v[w] + q[w] * (v.x.v[w] - shift.v[w]) + o[w];
      storeUnit<P>(dx.data, dx.dtype, r * channels + at, out);
    }
  };
  __device__ Column column(int64_t ch) const {
    Column c{x, dy, dx, {}, {}, {}, loadFloats<P>(x.data, x.dtype, ch), ch, channels};
#pragma unroll
    for (int w = 0; w < P; ++w) {
      c.k[w] = (float)coefficients[ch + w];
      c.q[w] = (float)coefficients[channels + ch + w];
      c.o[w] = (float)coefficients[2 * channels + ch + w];
    }
    return c;
  }
};

void batchNormBackward(LaunchContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  double eps = c.attrs.getF64("epsilon", 1e-5);
  if (gr.count == 0 || x.size() == 0)
    return;
  View xv = viewOf(x), scale = viewOf(c.in[2]), dx = viewOf(c.out[0]), ds = viewOf(c.out[1]),
       db = viewOf(c.out[2]);
  NormRelu relu = normReluOf(c.step, c.attrs);
  Gradient dy{operandOf(c, 1), relu.relu ? operandOf(c, relu.operand) : kNone};
  if (gr.inner == 1) { // channels last
    int per = rows::columnsPerLane(
        gr.count, {operandOf(c, 0), dy.dz, dy.relu, Operand{c.out[0].data, c.out[0].dtype}});
    rows::Columns m = rows::columnsOf(gr.outer, gr.count, per);
    double *coefficients = reinterpret_cast<double *>(
        c.device.scratch((3 * gr.count + rows::columnScratch<4>(m)) * sizeof(double)));
    withWidth(per, [&](auto p) {
      constexpr int P = decltype(p)::value;
      rows::columnSums<4, P>(
          c.stream(), m, ShiftedMoments<4, P>{xv, dy, gr.count}, coefficients + 3 * gr.count,
          BackwardStatistics{xv, scale, ds, db, gr.count, gr.outer, eps, coefficients});
      rows::eachInColumns(c.stream(), m, DxColumns<P>{xv, dy, dx, coefficients, gr.count});
    });
  } else {
    queueGroupBackward(c.stream(), xv, dy, scale, dx, ds, db, gr, eps);
  }
  launched(c);
}

} // namespace

void addNormKernels(KernelTable &t) {
  t[Kernel::BatchNorm] = batchNorm;
  t[Kernel::BatchNormBackward] = batchNormBackward;
}

} // namespace ampc::rt::cuda
