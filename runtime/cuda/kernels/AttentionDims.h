// What the fused attention's CUDA kernels share (docs/runtime.md,
// "Attention"): a step's dimensions, scale, causal mask, bias and dropout
// as the kernels read them, with the score and dropout factor of one
// (query, key) pair computed as the CPU reference computes them. The row
// kernels (Attention.cu) and the tensor-core kernels (AttentionTc*.cu)
// both take a Dims.
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONDIMS_H
#define AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONDIMS_H

#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt::cuda::attention {

struct Dims {
  int64_t batch, sq, sk, heads, d, dv;
  float scale;
  bool causal;
  /// Dropout (the CPU's Dims::dropFactor): the run counter on the device,
  /// the run's and the op's seeds; rate 0: none.
  const uint64_t *iteration = nullptr;
  uint64_t seed = 0, opSeed = 0;
  double rate = 0;
  float keep = 1;
  __device__ uint64_t stream() const {
    return rate == 0 ? 0 : num::dropoutStream(seed, opSeed, iteration ? *iteration : 0);
  }
  __device__ float dropFactor(uint64_t stream, int64_t b, int64_t head, int64_t i,
                              int64_t j) const {
    if (rate == 0)
      return 1.0f;
    uint64_t at = (uint64_t)(((b * heads + head) * sq + i) * sk + j);
    return num::uniformAt(stream, at) < rate ? 0.0f : keep;
  }
  __host__ __device__ int64_t at(int64_t b, int64_t pos, int64_t seq, int64_t head,
                                 int64_t width) const {
    return ((b * seq + pos) * heads + head) * width;
  }
  __device__ int64_t keys(int64_t i) const { return causal ? (i + 1 < sk ? i + 1 : sk) : sk; }
  /// The first query that sees key j.
  __device__ int64_t firstQuery(int64_t j) const { return causal ? j : 0; }
  /// The additive bias (data null: none) and its strides over [b, heads,
  /// sq, sk], 0 where broadcast.
  View bias{nullptr, DType::F32, 0, 0, {}};
  int64_t biasStride[4] = {0, 0, 0, 0};
  /// Score (b, head, i, j) from its dot product (the CPU's Dims::score).
  __device__ float score(float dot, int64_t b, int64_t head, int64_t i, int64_t j) const {
    float s = dot * scale;
    if (bias.data)
      s += cuda::load(bias.data, bias.dtype,
                      b * biasStride[0] + head * biasStride[1] + i * biasStride[2] +
                          j * biasStride[3]);
    return s;
  }
};

/// The step's Dims; fails the step where head_dim is above what the row
/// kernels take (256).
Dims dimsOf(const LaunchContext &c);

/// Whether the tensor-core kernels take the step (AttentionTcForward.cu):
/// q, k, v and every other tensor operand but the bias and the
/// log-sum-exp in one dtype, f16 or bf16; head_dim 64 or 128 for q, k and
/// v alike; 16-byte aligned; and AMPC_CUDA_ATTENTION is not `rows`.
bool tensorCoresTake(const LaunchContext &c, const Dims &m);

/// The forward on tensor cores; `lse` (or null) takes each row's
/// log-sum-exp, [b, sq, h].
void forwardOnTensorCores(LaunchContext &c, const Dims &m, float *lse);

/// The backward on tensor cores: dq, keeping each row's D = dy . y in
/// `dot` and its log-sum-exp in `lse` unless `savedLse` (the forward's),
/// then dk and dv from them (AttentionTcBackward.cu).
void backwardOnTensorCores(LaunchContext &c, const Dims &m, const float *savedLse, float *lse,
                           float *dot);

} // namespace ampc::rt::cuda::attention

#endif
