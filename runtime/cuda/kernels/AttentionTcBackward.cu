// The fused attention's backward on tensor cores (docs/runtime.md,
// "Attention"): FlashAttention-2's, in two launches without atomics.
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
#include "runtime/cuda/kernels/AttentionTiles.h"

namespace ampc::rt::cuda::attention {
namespace {

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

template <typename T, int D>
void backward(LaunchContext &c, const Dims &m, const float *savedLse, float *lse, float *dot) {
  size_t bytes = BackwardLayout<T, D>(0).bytes;
  allowShared<queryGradTiles<T, D>>(bytes);
  allowShared<keyGradTiles<T, D>>(bytes);
  View q = viewOf(c.in[0]), k = viewOf(c.in[1]), v = viewOf(c.in[2]);
  unsigned heads = (unsigned)m.heads, batch = (unsigned)m.batch;
  queryGradTiles<T, D><<<dim3((unsigned)((m.sq + kTile - 1) / kTile), heads, batch),
                         kTileThreads, bytes, c.stream()>>>(
      q, k, v, viewOf(c.in[3]), viewOf(c.in[4]), viewOf(c.out[0]), savedLse, lse, dot, m);
  launched(c);
  keyGradTiles<T, D><<<dim3((unsigned)((m.sk + kTile - 1) / kTile), heads, batch), kTileThreads,
                       bytes, c.stream()>>>(q, k, v, viewOf(c.in[4]), viewOf(c.out[1]),
                                            viewOf(c.out[2]), savedLse ? savedLse : lse, dot, m);
  launched(c);
}

} // namespace

void backwardOnTensorCores(LaunchContext &c, const Dims &m, const float *savedLse, float *lse,
                           float *dot) {
  bool bf16 = c.in[0].dtype == DType::BF16;
  if (m.d == 64)
    bf16 ? backward<__nv_bfloat16, 64>(c, m, savedLse, lse, dot)
         : backward<__half, 64>(c, m, savedLse, lse, dot);
  else
    bf16 ? backward<__nv_bfloat16, 128>(c, m, savedLse, lse, dot)
         : backward<__half, 128>(c, m, savedLse, lse, dot);
}

} // namespace ampc::rt::cuda::attention
