// The fused attention's forward on tensor cores (docs/runtime.md,
// "Attention"), FlashAttention-2's loop: a block takes 64 queries of one
// (batch, head), a warp 16 of them; for each tile of 64 keys the warp
// computes its scores S = Q K^T on tensor cores (f32 sums), takes them
// through shared memory to its lane pairs, which add the scale, bias and
// causal mask, keep each row's running maximum and sum in f32, and write
// the probabilities, times their dropout factors, rounded to q's dtype;
// then the output sums, kept in WMMA accumulators, are rescaled by
// exp(m_old - m_new) row by row and take P V. At the end each row is
// multiplied by the inverse of its sum and rounded once. Where the row kernels (Attention.cu) keep
// each probability in f32, these round it to f16 or bf16 before the
// product with V, as FlashAttention does: the `attention` agreement class
// (docs/runtime.md, "Checking a backend") covers that rounding.
#include "runtime/core/StepVariants.h"
#include "runtime/cuda/kernels/AttentionTiles.h"

namespace ampc::rt::cuda::attention {
namespace {

/// Multiplies each row of `sums` by factors[its row].
template <int N> __device__ void scaleRows(Acc (&sums)[N], const Acc &rows, const float *factors) {
#pragma unroll
  for (int n = 0; n < N; ++n)
#pragma unroll
    for (int t = 0; t < sums[n].num_elements; ++t)
      sums[n].x[t] *= factors[int(rows.x[t])];
}

/// Grid (query tiles, heads, batch), kTileThreads threads.
template <typename T, int D>
__global__ void __launch_bounds__(kTileThreads)
    forwardTiles(View q, View k, View v, View y, float *lse, Dims m) {
  extern __shared__ __align__(128) char shared[];
  ForwardLayout<T, D> s(reinterpret_cast<uintptr_t>(shared));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane / 2, half = lane % 2;
  int64_t q0 = int64_t(blockIdx.x) * kTile, head = blockIdx.y, b = blockIdx.z;
  int64_t i = q0 + warp * kStrip + r; // the lane pair's query
  float *scores = s.scores + warp * kStrip * kScoreStride, *factors = s.factors + warp * kStrip;
  T *probs = s.probs + warp * kStrip * kProbStride;
  Acc rows = rowsOfAccumulators(scores), sums[D / 16];
#pragma unroll
  for (Acc &o : sums)
    wmma::fill_fragment(o, 0.0f);
  loadTile<T, D>(s.q, q.data, b, q0, m.sq, m.heads, head);
  float most = -INFINITY, total = 0; // the row's running maximum and sum
  uint64_t stream = m.stream();
  for (int64_t k0 = 0, keys = keysSeen(m, q0); k0 < keys; k0 += kTile) {
    __syncthreads(); // every warp is done with the last tile
    loadTile<T, D>(s.k, k.data, b, k0, m.sk, m.heads, head);
    loadTile<T, D>(s.v, v.data, b, k0, m.sk, m.heads, head);
    __syncthreads();
    stripTimesTileT<T, D>(scores, s.q + warp * kStrip * kRowStride<D>, s.k);
    float sc[kHalfRow];
    float next = fmaxf(most, rowScores(sc, scores, m, b, head, i, k0)), sum = 0, correction = 1;
    if (next != -INFINITY) { // else every score so far is masked: nothing to add
      correction = expf(most - next);
      most = next;
    }
#pragma unroll
    for (int t = 0; t < kHalfRow; ++t) {
      float p = sc[t] == -INFINITY ? 0.0f : expf(sc[t] - most);
      sum += p;
      float kept = p == 0.0f ? 0.0f : p * m.dropFactor(stream, b, head, i, k0 + 2 * t + half);
      probs[r * kProbStride + 2 * t + half] = roundTo<T>(kept);
    }
    total = total * correction + sum + __shfl_xor_sync(0xffffffffu, sum, 1);
    if (half == 0)
      factors[r] = correction;
    __syncwarp();
    scaleRows(sums, rows, factors);
    stripTimesTile<T, D>(sums, probs, s.v);
  }
  __syncwarp();
  if (half == 0)
    factors[r] = total > 0 ? 1.0f / total : 0.0f; // all masked: 0
  __syncwarp();
  scaleRows(sums, rows, factors);
  if (lse && half == 0 && i < m.sq)
    lse[(b * m.sq + i) * m.heads + head] = most + logf(total);
  __syncthreads(); // the k and v tiles' space stages the results
  float *staging = reinterpret_cast<float *>(s.k) + warp * kStrip * kStageStride<D>;
  storeStrip<D>(sums, staging, y, b, q0 + warp * kStrip, m.sq, m.heads, head);
}

template <typename T, int D> void forward(LaunchContext &c, const Dims &m, float *lse) {
  size_t bytes = ForwardLayout<T, D>(0).bytes;
  allowShared<forwardTiles<T, D>>(bytes);
  dim3 grid((unsigned)((m.sq + kTile - 1) / kTile), (unsigned)m.heads, (unsigned)m.batch);
  forwardTiles<T, D><<<grid, kTileThreads, bytes, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.out[0]), lse, m);
  launched(c);
}

} // namespace

bool tensorCoresTake(const LaunchContext &c, const Dims &m) {
  static const bool rowsOnly = envIs("AMPC_CUDA_ATTENTION", "rows");
  DType t = c.in[0].dtype;
  if (rowsOnly || m.d != m.dv || (m.d != 64 && m.d != 128) ||
      (t != DType::F16 && t != DType::BF16) || m.heads > 65535 || m.batch > 65535 ||
      m.batch * m.heads * m.sq * m.sk == 0) // a grid of 0 blocks is no launch
    return false;
  auto fits = [&](const TensorRef &x) {
    return x.dtype == t && reinterpret_cast<uintptr_t>(x.data) % 16 == 0;
  };
  AttentionOperands operands = attentionOperandsOf(c.step, c.attrs);
  for (int i = 0; i < (int)c.in.size(); ++i)
    if (i != operands.bias && i != operands.lse && i != operands.counter && !fits(c.in[i]))
      return false;
  // The forward's second result is its log-sum-exp (f32).
  bool forward = c.step.kernel == Kernel::Attention;
  for (size_t o = 0; o < (forward ? 1 : c.out.size()); ++o)
    if (!fits(c.out[o]))
      return false;
  // Shared memory: up to 121 KiB (the backward at head_dim 128), which
  // sm_80 and sm_90 have and sm_86 and sm_89 (99 KiB) may not.
  size_t bytes = m.d == 64 ? (forward ? ForwardLayout<__half, 64>(0).bytes
                                      : BackwardLayout<__half, 64>(0).bytes)
                           : (forward ? ForwardLayout<__half, 128>(0).bytes
                                      : BackwardLayout<__half, 128>(0).bytes);
  return bytes <= c.device.sharedPerBlock();
}

void forwardOnTensorCores(LaunchContext &c, const Dims &m, float *lse) {
  bool bf16 = c.in[0].dtype == DType::BF16;
  if (m.d == 64)
    bf16 ? forward<__nv_bfloat16, 64>(c, m, lse) : forward<__half, 64>(c, m, lse);
  else
    bf16 ? forward<__nv_bfloat16, 128>(c, m, lse) : forward<__half, 128>(c, m, lse);
}

} // namespace ampc::rt::cuda::attention
