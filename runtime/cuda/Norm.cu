// batch_norm (training: batch statistics, moving the running ones; eval: the
// running ones) and its backward. Every statistic is summed in double by one
// thread per channel, in the CPU's order, so the results are the CPU's bits;
// the per-element passes run in parallel. (layer_norm: LayerNorm.cu.)
#include "runtime/cuda/CudaKernels.h"

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
__global__ void batchStatistics(View x, View scale, View bias, View runMean, View runVar,
                                Groups gr, bool training, double eps, double momentum, float *a,
                                float *b) {
  AMPC_GRID_STRIDE(ch, gr.count) {
    double mean = 0, var = 0;
    if (training) {
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

void batchNorm(KernelContext &c) {
  const TensorRef &x = c.in[0];
  Groups gr = groupsOf(c, x);
  float *ab = reinterpret_cast<float *>(c.device.scratch(2 * gr.count * sizeof(float)));
  batchStatistics<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(
      viewOf(x), viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.in[3]), viewOf(c.in[4]), gr,
      c.training, c.attrs.getF64("epsilon", 1e-5), c.attrs.getF64("momentum", 0.9), ab,
      ab + gr.count);
  batchApply<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(viewOf(x), viewOf(c.out[0]), gr,
                                                                ab, ab + gr.count);
  launched(c);
}

/// Per channel: mean, inverse deviation, and the sums of the backward.
struct GroupSums {
  double *mean, *inv, *sumD, *sumDX;
};

/// The channels-last batch norm backward of the CPU (rows x channels).
__global__ void channelsLastSums(View x, View dy, Groups gr, double eps, GroupSums s) {
  int64_t rows = gr.outer;
  AMPC_GRID_STRIDE(ch, gr.count) {
    double mean = 0, var = 0, sumD = 0, sumDX = 0;
    for (int64_t r = 0; r < rows; ++r)
      mean += load(x.data, x.dtype, r * gr.count + ch);
    mean /= rows;
    for (int64_t r = 0; r < rows; ++r) {
      double d = load(x.data, x.dtype, r * gr.count + ch) - mean;
      var += d * d;
    }
    double inv = 1.0 / sqrt(var / rows + eps);
    for (int64_t r = 0; r < rows; ++r) {
      double g = load(dy.data, dy.dtype, r * gr.count + ch),
             xhat = (load(x.data, x.dtype, r * gr.count + ch) - mean) * inv;
      sumD += g;
      sumDX += g * xhat;
    }
    s.mean[ch] = mean, s.inv[ch] = inv, s.sumD[ch] = sumD, s.sumDX[ch] = sumDX;
  }
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
                              double eps, GroupSums s) {
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
  double *buf = reinterpret_cast<double *>(c.device.scratch(4 * gr.count * sizeof(double)));
  GroupSums s{buf, buf + gr.count, buf + 2 * gr.count, buf + 3 * gr.count};
  View xv = viewOf(x), dy = viewOf(c.in[1]), scale = viewOf(c.in[2]), dx = viewOf(c.out[0]),
       ds = viewOf(c.out[1]), db = viewOf(c.out[2]);
  if (c.attrs.getStr("layout", "NHWC") == "NHWC") {
    channelsLastSums<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(xv, dy, gr, eps, s);
    channelsLastDx<<<blocksFor(x.size()), kThreads, 0, c.stream()>>>(xv, dy, scale, dx, ds, db,
                                                                      gr, s);
  } else {
    groupBackward<<<blocksFor(gr.count), kThreads, 0, c.stream()>>>(xv, dy, scale, dx, ds, db, gr,
                                                                     eps, s);
  }
  launched(c);
}

} // namespace

void addNormKernels(KernelTable &t) {
  t["batch_norm"] = batchNorm;
  t["batch_norm_backward"] = batchNormBackward;
}

} // namespace ampc::rt::cuda
