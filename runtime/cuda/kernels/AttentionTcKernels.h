// The fused attention's kernels on tensor cores (docs/runtime.md,
// "Attention"), launched by AttentionTcForward.cu and AttentionTcBackward.cu;
// tests/cuda/AttentionEmulatedTest.cpp runs them on the host (runtime/cuda/emulator)
// against the CPU reference.
//
// Forward, FlashAttention-2's loop: a block takes 64 queries of one (batch,
// head), a warp 16 of them; for each tile of 64 keys the warp computes its
// scores S = Q K^T on tensor cores (f32 sums), takes them through shared
// memory to its lane pairs, which add the scale, bias and causal mask, keep
// each row's running maximum and sum in f32, and write the probabilities,
// times their dropout factors, rounded to q's dtype; then the output sums,
// kept in WMMA accumulators, are rescaled by exp(m_old - m_new) row by row
// and take P V. At the end each row is multiplied by the inverse of its sum
// and rounded once. Where the row kernels (Attention.cu) keep each
// probability in f32, these round it to f16 or bf16 before the product with
// V, as FlashAttention does: the `attention` agreement class (docs/runtime.md,
// "Checking a backend") covers that rounding.
//
// Backward, FlashAttention-2's, in two launches without atomics:
//  - dq: a block takes 64 queries (a warp 16). Each row's D = dy . y (y as
//    stored) and, unless the forward kept it, its log-sum-exp (one pass of
//    Q K^T over the keys, as the forward sums). Then for each tile of keys:
//    S = Q K^T and dP = dY V^T on tensor cores, and in the lane pairs
//    P = exp(S - lse), dS = P (f dP - D) scale (f the dropout factor),
//    rounded to q's dtype; dq += dS K.
//  - dk, dv: a block takes 64 keys (a warp 16). For each tile of queries
//    that sees them: S^T = K Q^T and dP^T = V dY^T, P^T and dS^T as above
//    from the rows' log-sum-exp and D that the dq launch kept;
//    dv += (f P)^T dY, dk += dS^T Q.
// Each gradient is rounded once to its dtype.
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONTCKERNELS_H
#define AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONTCKERNELS_H

#include "runtime/cuda/kernels/AttentionTiles.h"

namespace ampc::rt::cuda::attention {

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

/// The row's log-sum-exp over the keys its block sees, summed as the
/// forward sums (tiles of 64, the running maximum and sum in f32).
template <typename T, int D>
__device__ float logSumExp(const BackwardLayout<T, D> &s, const View &k, const Dims &m, int64_t b,
                           int64_t head, int64_t q0, int64_t i) {
  int warp = threadIdx.x / 32;
  float *scores = s.scores + warp * kStrip * kScoreStride, most = -INFINITY, total = 0;
  for (int64_t k0 = 0, keys = keysSeen(m, q0); k0 < keys; k0 += kTile) {
    __syncthreads();
    loadTile<T, D>(s.tileA, k.data, b, k0, m.sk, m.heads, head);
    __syncthreads();
    stripTimesTileT<T, D>(scores, s.rowsA + warp * kStrip * kRowStride<D>, s.tileA);
    float sc[kHalfRow];
    float next = fmaxf(most, rowScores(sc, scores, m, b, head, i, k0)), sum = 0;
#pragma unroll
    for (int t = 0; t < kHalfRow; ++t)
      sum += sc[t] == -INFINITY ? 0.0f : expf(sc[t] - next);
    sum += __shfl_xor_sync(0xffffffffu, sum, 1); // every lane: no branch before it
    if (next != -INFINITY) { // else every score so far is masked
      total = total * expf(most - next) + sum;
      most = next;
    }
  }
  return most + logf(total);
}

/// dq; keeps each row's D in `dot` and, unless `savedLse`, its log-sum-exp
/// in `lse`. Grid (query tiles, heads, batch).
template <typename T, int D>
__global__ void __launch_bounds__(kTileThreads)
    queryGradTiles(View q, View k, View v, View y, View dy, View dq, const float *savedLse,
                   float *lse, float *dot, Dims m) {
  extern __shared__ __align__(128) char shared[];
  BackwardLayout<T, D> s(reinterpret_cast<uintptr_t>(shared));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane / 2, half = lane % 2;
  int64_t q0 = int64_t(blockIdx.x) * kTile, head = blockIdx.y, b = blockIdx.z;
  int64_t i = q0 + warp * kStrip + r, row = (b * m.sq + i) * m.heads + head;
  float *scores = s.scores + warp * kStrip * kScoreStride,
        *dprobs = s.dprobs + warp * kStrip * kScoreStride;
  T *grads = s.grads + warp * kStrip * kProbStride;
  loadTile<T, D>(s.rowsA, q.data, b, q0, m.sq, m.heads, head);
  loadTile<T, D>(s.rowsB, dy.data, b, q0, m.sq, m.heads, head);
  float rowDot = 0;
  for (int x = half; x < D && i < m.sq; x += 2)
    rowDot += cuda::load(dy.data, dy.dtype, row * D + x) * cuda::load(y.data, y.dtype, row * D + x);
  rowDot += __shfl_xor_sync(0xffffffffu, rowDot, 1);
  // Without the forward's, every warp of the block recomputes (and syncs).
  float rowLse = savedLse ? (i < m.sq ? savedLse[row] : -INFINITY)
                          : logSumExp<T, D>(s, k, m, b, head, q0, i);
  Acc sums[D / 16];
#pragma unroll
  for (Acc &o : sums)
    wmma::fill_fragment(o, 0.0f);
  uint64_t stream = m.stream();
  for (int64_t k0 = 0, keys = keysSeen(m, q0); k0 < keys; k0 += kTile) {
    __syncthreads();
    loadTile<T, D>(s.tileA, k.data, b, k0, m.sk, m.heads, head);
    loadTile<T, D>(s.tileB, v.data, b, k0, m.sk, m.heads, head);
    __syncthreads();
    stripTimesTileT<T, D>(scores, s.rowsA + warp * kStrip * kRowStride<D>, s.tileA);
    stripTimesTileT<T, D>(dprobs, s.rowsB + warp * kStrip * kRowStride<D>, s.tileB);
    float sc[kHalfRow];
    rowScores(sc, scores, m, b, head, i, k0);
#pragma unroll
    for (int t = 0; t < kHalfRow; ++t) {
      int c = 2 * t + half;
      float ds = 0;
      if (sc[t] != -INFINITY && rowLse != -INFINITY) {
        float p = expf(sc[t] - rowLse), f = m.dropFactor(stream, b, head, i, k0 + c);
        ds = p * (f * dprobs[r * kScoreStride + c] - rowDot) * m.scale;
      }
      grads[r * kProbStride + c] = roundTo<T>(ds);
    }
    __syncwarp();
    stripTimesTile<T, D>(sums, grads, s.tileA);
  }
  if (half == 0 && i < m.sq) {
    dot[row] = rowDot;
    if (!savedLse)
      lse[row] = rowLse;
  }
  __syncthreads(); // the walked tiles' space stages the results
  storeStrip<D>(sums, s.staging(warp), dq, b, q0 + warp * kStrip, m.sq, m.heads, head);
}

/// dk and dv from the rows' log-sum-exp and D. Grid (key tiles, heads,
/// batch).
template <typename T, int D>
__global__ void __launch_bounds__(kTileThreads)
    keyGradTiles(View q, View k, View v, View dy, View dk, View dv, const float *lse,
                 const float *dot, Dims m) {
  extern __shared__ __align__(128) char shared[];
  BackwardLayout<T, D> s(reinterpret_cast<uintptr_t>(shared));
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32, r = lane / 2, half = lane % 2;
  int64_t k0 = int64_t(blockIdx.x) * kTile, head = blockIdx.y, b = blockIdx.z;
  int64_t j = k0 + warp * kStrip + r; // the lane pair's key
  float *scores = s.scores + warp * kStrip * kScoreStride,
        *dprobs = s.dprobs + warp * kStrip * kScoreStride;
  T *probs = s.probs + warp * kStrip * kProbStride, *grads = s.grads + warp * kStrip * kProbStride;
  loadTile<T, D>(s.rowsA, k.data, b, k0, m.sk, m.heads, head);
  loadTile<T, D>(s.rowsB, v.data, b, k0, m.sk, m.heads, head);
  Acc dkSums[D / 16], dvSums[D / 16];
#pragma unroll
  for (int n = 0; n < D / 16; ++n) {
    wmma::fill_fragment(dkSums[n], 0.0f);
    wmma::fill_fragment(dvSums[n], 0.0f);
  }
  uint64_t stream = m.stream();
  // Causal: query i sees key j where j <= i, so the first query to walk is k0.
  for (int64_t q0 = m.causal ? k0 : 0; q0 < m.sq; q0 += kTile) {
    __syncthreads();
    loadTile<T, D>(s.tileA, q.data, b, q0, m.sq, m.heads, head);
    loadTile<T, D>(s.tileB, dy.data, b, q0, m.sq, m.heads, head);
    for (int e = threadIdx.x; e < kTile; e += blockDim.x) {
      int64_t at = (b * m.sq + q0 + e) * m.heads + head;
      s.lse[e] = q0 + e < m.sq ? lse[at] : -INFINITY;
      s.dot[e] = q0 + e < m.sq ? dot[at] : 0.0f;
    }
    __syncthreads();
    stripTimesTileT<T, D>(scores, s.rowsA + warp * kStrip * kRowStride<D>, s.tileA);
    stripTimesTileT<T, D>(dprobs, s.rowsB + warp * kStrip * kRowStride<D>, s.tileB);
#pragma unroll 4
    for (int t = 0; t < kHalfRow; ++t) {
      int c = 2 * t + half;
      int64_t i = q0 + c;
      float fp = 0, ds = 0;
      if (j < m.sk && i < m.sq && !(m.causal && j > i) && s.lse[c] != -INFINITY) {
        float p = expf(m.score(scores[r * kScoreStride + c], b, head, i, j) - s.lse[c]),
              f = m.dropFactor(stream, b, head, i, j);
        fp = p * f;
        ds = p * (f * dprobs[r * kScoreStride + c] - s.dot[c]) * m.scale;
      }
      probs[r * kProbStride + c] = roundTo<T>(fp);
      grads[r * kProbStride + c] = roundTo<T>(ds);
    }
    __syncwarp();
    stripTimesTile<T, D>(dvSums, probs, s.tileB);
    stripTimesTile<T, D>(dkSums, grads, s.tileA);
  }
  __syncthreads();
  storeStrip<D>(dkSums, s.staging(warp), dk, b, k0 + warp * kStrip, m.sk, m.heads, head);
  storeStrip<D>(dvSums, s.staging(warp), dv, b, k0 + warp * kStrip, m.sk, m.heads, head);
}

} // namespace ampc::rt::cuda::attention

#endif
