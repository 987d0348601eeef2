// What batch norm's kernels share (Norm.cu, channels last; NormChannelsFirst.cu):
// the operands a step may lack, the forward's end (relu, residual add), the
// backward's dy (through the relu), the channels' layout, and each
// channel's scale and shift from its statistics.
#ifndef AMPC_RUNTIME_CUDA_NORMPARTS_H
#define AMPC_RUNTIME_CUDA_NORMPARTS_H

#include <initializer_list>

#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Quads.h"
#include "runtime/numerics/Activations.h"

namespace ampc::rt::cuda::norm {

/// A tensor read element by element: data null where the step has none.
struct Operand {
  const void *data;
  DType dtype;
};

constexpr Operand kNone{nullptr, DType::F32};

inline Operand operandOf(const LaunchContext &c, size_t input) {
  return input < c.in.size() ? Operand{c.in[input].data, c.in[input].dtype} : kNone;
}

/// Elements i .. i + P - 1 of o as f32 (zeros where o has no data).
template <int P> __device__ Floats<P> loadOperand(const Operand &o, int64_t i) {
  Floats<P> f{};
  if (o.data)
    loadUnit<P>(o.data, o.dtype, i, f.v);
  return f;
}

/// batch_norm's end: y, or with a relu relu(round(round(y) + residual)).
struct NormEpilogue {
  bool relu;
  Operand residual; // data only with the relu
  DType dtype;      // the result's
  /// r: the residual's element (unused without one).
  __device__ float operator()(float y, float r) const {
    if (!relu)
      return y;
    if (residual.data)
      y = roundThrough(y, dtype) + r;
    return num::Relu{}.value(roundThrough(y, dtype));
  }
};

inline NormEpilogue epilogueOf(const LaunchContext &c) {
  NormRelu relu = normReluOf(c.step, c.attrs);
  return {relu.relu, relu.operand >= 0 ? operandOf(c, relu.operand) : kNone, c.out[0].dtype};
}

/// batch_norm_backward's dy: the incoming gradient, or with a relu its
/// product with the relu's derivative at the relu's result, rounded to the
/// gradient's dtype as the unfused relu backward stored it.
struct Gradient {
  Operand dz, relu;
  /// Elements i .. i + P - 1.
  template <int P> __device__ Floats<P> at(int64_t i) const {
    Floats<P> g = loadOperand<P>(dz, i);
    if (relu.data) {
      Floats<P> z = loadOperand<P>(relu, i);
#pragma unroll
      for (int w = 0; w < P; ++w)
        g.v[w] = roundThrough(g.v[w] * num::Relu{}.derivative(z.v[w], z.v[w]), dz.dtype);
    }
    return g;
  }
  __device__ float operator()(int64_t i) const { return at<1>(i).v[0]; }
};

/// Batch norm's channels: each spans outer x inner elements.
struct Groups {
  int64_t count, outer, inner, span;
  __device__ int64_t at(int64_t g, int64_t k) const {
    return ((k / inner) * count + g) * inner + k % inner;
  }
};

inline Groups groupsOf(const LaunchContext &c, const TensorRef &x) {
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

/// Channels first (training: one thread per channel sums the statistics in
/// the CPU's order), or evaluation (the running statistics): each channel's
/// affine.
void queueGroupStatistics(cudaStream_t stream, View x, Groups gr, ChannelAffine affine);

/// Channels first: y = end(x * a + b), any layout.
void queueGroupApply(cudaStream_t stream, View x, View y, Groups gr, const float *a, const float *b,
                     NormEpilogue end);

/// The CPU's channels-first batch norm backward, one thread per channel.
void queueGroupBackward(cudaStream_t stream, View x, Gradient dy, View scale, View dx, View ds,
                        View db, Groups gr, double eps);

} // namespace ampc::rt::cuda::norm

#endif
