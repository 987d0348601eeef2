// batch_norm over channels first (NCHW; and each layout's evaluation
// statistics): one thread per channel sums its statistics in the CPU's order,
// and the element pass finds each element's channel by division. ResNet's
// NHWC batch norms run over columns (Norm.cu).
#include "runtime/cuda/kernels/NormParts.h"

namespace ampc::rt::cuda::norm {
namespace {

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

__global__ void batchApply(View x, View y, Groups gr, const float *a, const float *b,
                           NormEpilogue end) {
  AMPC_GRID_STRIDE(e, y.size) {
    int64_t ch = (e / gr.inner) % gr.count;
    float v = load(x.data, x.dtype, e) * a[ch] + b[ch];
    store(y.data, y.dtype, e, end(v, loadOperand<1>(end.residual, e).v[0]));
  }
}

__global__ void groupBackward(View x, Gradient dy, View scale, View dx, View ds, View db, Groups gr,
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
      double xhat = (load(x.data, x.dtype, gr.at(g, k)) - mean) * inv, d = dy(gr.at(g, k));
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
            float(inv * (dy(gr.at(g, k)) * sc - sumD / gr.span - xhat * sumDX / gr.span)));
    }
    store(ds.data, ds.dtype, g, (float)dscale);
    store(db.data, db.dtype, g, (float)dbias);
  }
}

} // namespace

void queueGroupStatistics(cudaStream_t stream, View x, Groups gr, ChannelAffine affine) {
  batchStatistics<<<blocksFor(gr.count), kThreads, 0, stream>>>(x, gr, affine);
}

void queueGroupApply(cudaStream_t stream, View x, View y, Groups gr, const float *a, const float *b,
                     NormEpilogue end) {
  batchApply<<<blocksFor(y.size), kThreads, 0, stream>>>(x, y, gr, a, b, end);
}

void queueGroupBackward(cudaStream_t stream, View x, Gradient dy, View scale, View dx, View ds,
                        View db, Groups gr, double eps) {
  groupBackward<<<blocksFor(gr.count), kThreads, 0, stream>>>(x, dy, scale, dx, ds, db, gr, eps);
}

} // namespace ampc::rt::cuda::norm
