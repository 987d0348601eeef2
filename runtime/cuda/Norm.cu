// batch_norm (training: batch statistics, moving the running ones; eval: the
// running ones) and its backward. Every statistic is summed in double with
// the CPU's formulas: channels last (NHWC, the default), down the columns of
// [rows, channels] in two deterministic stages (rows::columnSums), so they
// agree with the CPU's sequential sums within a rounding; channels first,
// by one thread per channel in the CPU's order. The per-element passes run
// in parallel. (layer_norm: LayerNorm.cu.)
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/Rows.h"

namespace ampc::rt::cuda {
namespace {

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

/// Batch norm's per-channel scale a and shift b (y = x * a + b); in
/// training, from the batch's statistics, moving the running ones.
/// Channels last, `stats` holds each channel's mean and summed squared
/// deviation (columnStatistics); channels first (null), one thread per
/// channel sums them.
__global__ void batchStatistics(View x, View scale, View bias, View runMean, View runVar,
                                Groups gr, bool training, double eps, double momentum,
                                const double *stats, float *a, float *b) {
  AMPC_GRID_STRIDE(ch, gr.count) {
    double mean = 0, var = 0;
    if (training && stats) {
      mean = stats[ch];
      var = stats[gr.count + ch] / gr.span;
    } else if (training) {
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
    }
    if (training) {
      double unbiased = gr.span > 1 ? var * gr.span / (gr.span - 1) : var;
      float rm = load(runMean.data, runMean.dtype, ch), rv = load(runVar.data, runVar.dtype, ch);
      store(runMean.data, runMean.dtype, ch, float(momentum * rm + (1 - momentum) * mean));
      store(runVar.data, runVar.dtype, ch, float(momentum * rv + (1 - momentum) * unbiased));
    } else {
      mean = load(runMean.data, runMean.dtype, ch);
      var = load(runVar.data, runVar.dtype, ch);
    }
    a[ch] = float(load(scale.data, scale.dtype, ch) / sqrt(var + eps));
    b[ch] = float(load(bias.data, bias.dtype, ch) - mean * a[ch]);
  }
}

__global__ void batchApply(View x, View y, Groups gr, const float *a, const float *b) {
  AMPC_GRID_STRIDE(e, y.size) {
    int64_t ch = (e / gr.inner) % gr.count;
    store(y.data, y.dtype, e, load(x.data, x.dtype, e) * a[ch] + b[ch]);
  }
}

/// Channels last: the column of channel `ch` in [rows, channels].
struct ChannelSum {
  View x;
  int64_t channels;
  __device__ void operator()(int64_t r, int64_t ch, double *acc) const {
    acc[0] += load(x.data, x.dtype, r * channels + ch);
  }
};

struct SquaredDeviation {
  View x;
  const double *mean;
  int64_t channels;
  __device__ void operator()(int64_t r, int64_t ch, double *acc) const {
    double d = load(x.data, x.dtype, r * channels + ch) - mean[ch];
    acc[0] += d * d;
  }
};

__global__ void divideBy(double *v, int64_t n, double by) {
  AMPC_GRID_STRIDE(i, n) { v[i] /= by; }
}

/// Channels last: stats[ch] = the channel's mean, stats[channels + ch] its
/// summed squared deviation, as the CPU sums them (two passes).
void columnStatistics(KernelContext &c, const View &x, const Groups &gr, double *stats,
                      double *partials) {
  rows::Columns m = rows::columnsOf(gr.outer, gr.count);
  rows::columnSums<1>(c.stream(), m, ChannelSum{x, gr.count}, partials, stats);
  divideBy<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(stats, gr.count, (double)gr.outer);
  rows::columnSums<1>(c.stream(), m, SquaredDeviation{x, stats, gr.count}, partials,
                      stats + gr.count);
}

void batchNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  bool columns = c.training && gr.inner == 1 && gr.outer > 0;
  int64_t partialCount = columns ? rows::columnScratch<1>(rows::columnsOf(gr.outer, gr.count)) : 0;
  double *stats = reinterpret_cast<double *>(c.device.scratch(
      (2 * gr.count + partialCount) * sizeof(double) + 2 * gr.count * sizeof(float)));
  float *ab = reinterpret_cast<float *>(stats + 2 * gr.count + partialCount);
  View xv = viewOf(x);
  if (columns)
    columnStatistics(c, xv, gr, stats, stats + 2 * gr.count);
  batchStatistics<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(
      xv, viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.in[3]), viewOf(c.in[4]), gr, c.training,
      c.attrs.getF64("epsilon", 1e-5), c.attrs.getF64("momentum", 0.9),
      columns ? stats : nullptr, ab, ab + gr.count);
  batchApply<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(xv, viewOf(c.out[0]), gr, ab,
                                                                ab + gr.count);
  launched(c);
}

/// Per channel: mean, inverse deviation, and the sums of the backward.
struct GroupSums {
  double *mean, *inv, *sumD, *sumDX;
};

/// Channels last: the backward's sums of channel ch, dy and dy * xhat.
struct BackwardTerms {
  View x, dy;
  const double *mean, *inv;
  int64_t channels;
  __device__ void operator()(int64_t r, int64_t ch, double *acc) const {
    double g = load(dy.data, dy.dtype, r * channels + ch),
           xhat = (load(x.data, x.dtype, r * channels + ch) - mean[ch]) * inv[ch];
    acc[0] += g;
    acc[1] += g * xhat;
  }
};

/// A summed squared deviation becomes the inverse deviation.
__global__ void inverseDeviation(double *v, int64_t n, double rows, double eps) {
  AMPC_GRID_STRIDE(i, n) { v[i] = 1.0 / sqrt(v[i] / rows + eps); }
}

__global__ void channelsLastDx(View x, View dy, View scale, View dx, View ds, View db, Groups gr,
                               GroupSums s) {
  int64_t rows = gr.outer;
  AMPC_GRID_STRIDE(e, dx.size) {
    int64_t ch = e % gr.count;
    double xhat = (load(x.data, x.dtype, e) - s.mean[ch]) * s.inv[ch];
    store(dx.data, dx.dtype, e,
          float(load(scale.data, scale.dtype, ch) * s.inv[ch] *
                (load(dy.data, dy.dtype, e) - s.sumD[ch] / rows - xhat * s.sumDX[ch] / rows)));
    if (e < gr.count) {
      store(ds.data, ds.dtype, e, (float)s.sumDX[e]);
      store(db.data, db.dtype, e, (float)s.sumD[e]);
    }
  }
}

/// The CPU's channels-first batch norm backward, one thread per channel.
__global__ void groupBackward(View x, View dy, View scale, View dx, View ds, View db, Groups gr,
                              double eps) {
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
             d = load(dy.data, dy.dtype, gr.at(g, k));
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
            float(inv * (load(dy.data, dy.dtype, gr.at(g, k)) * sc - sumD / gr.span -
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
  rows::Columns m = rows::columnsOf(gr.outer, gr.count);
  double *buf = reinterpret_cast<double *>(
      c.device.scratch((4 * gr.count + rows::columnScratch<2>(m)) * sizeof(double)));
  GroupSums s{buf, buf + gr.count, buf + 2 * gr.count, buf + 3 * gr.count};
  double *partials = buf + 4 * gr.count;
  View xv = viewOf(x), dy = viewOf(c.in[1]), scale = viewOf(c.in[2]), dx = viewOf(c.out[0]),
       ds = viewOf(c.out[1]), db = viewOf(c.out[2]);
  if (c.attrs.getStr("layout", "NHWC") == "NHWC") {
    columnStatistics(c, xv, gr, s.mean, partials); // the mean, then into s.inv the squared sum
    inverseDeviation<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(s.inv, gr.count,
                                                                        (double)gr.outer, eps);
    rows::columnSums<2>(c.stream(), m, BackwardTerms{xv, dy, s.mean, s.inv, gr.count}, partials,
                        s.sumD); // sumD, then sumDX after it
    channelsLastDx<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(xv, dy, scale, dx, ds, db,
                                                                      gr, s);
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
