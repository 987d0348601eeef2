// The tensor-core attention's parts (AttentionTcForward.cu,
// AttentionTcBackward.cu; docs/runtime.md, "Attention"): tiles of 64 rows of
// one (batch, head) in shared memory, and a warp's products of its strip of
// 16 rows with a tile through WMMA (16 x 16 x 16, f16 or bf16 operands, f32
// sums). A block of four warps takes 64 rows: queries for the forward and
// for dq, keys for dk and dv. The warps share the tiles; each keeps its
// strip's scores and probabilities in shared memory of its own, where a
// lane pair takes one row (lane 2r + h its columns h, h + 2, ...).
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONTILES_H
#define AMPC_RUNTIME_CUDA_KERNELS_ATTENTIONTILES_H

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <mma.h>

#include "runtime/cuda/kernels/AttentionDims.h"

namespace ampc::rt::cuda::attention {

namespace wmma = nvcuda::wmma;

constexpr int kTile = 64;                       // rows of a tile
constexpr int kStrip = 16;                      // a warp's rows; WMMA's m, n and k
constexpr int kStripWarps = kTile / kStrip;     // warps of a block
constexpr int kTileThreads = kStripWarps * 32;  // threads of a block
constexpr int kHalfRow = kTile / 2;             // a lane's columns of its row
constexpr int kScoreStride = kTile + 4;         // f32 strips: [16][68]
constexpr int kProbStride = kTile + 8;          // f16/bf16 strips: [16][72]
/// A tile's row stride: 8 elements more than head_dim, so that rows start in
/// different banks and every 16-element block stays 32-byte aligned.
template <int D> constexpr int kRowStride = D + 8;
/// A staged result's row stride (f32).
template <int D> constexpr int kStageStride = D + 4;

/// The warps stage their results (f32) in two tiles' space.
template <int D> constexpr bool kTwoTilesStage =
    kStripWarps * kStrip * kStageStride<D> * sizeof(float) <= 2 * kTile * kRowStride<D> * 2;
static_assert(kTwoTilesStage<64> && kTwoTilesStage<128>);

using Acc = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;
template <typename T> using RowsA = wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major>;
template <typename T> using RowsB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major>;
/// B = X^T for X's rows stored row-major.
template <typename T> using ColsB = wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major>;

/// f32 rounded to nearest even (a probability, a score gradient).
template <typename T> __device__ inline T roundTo(float v);
template <> __device__ inline __half roundTo<__half>(float v) { return __float2half_rn(v); }
template <> __device__ inline __nv_bfloat16 roundTo<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

/// Shared memory cut in order, each part 128-byte aligned; from base 0 on
/// the host, its size.
struct Carve {
  uintptr_t at;
  template <typename X> __host__ __device__ X *take(size_t count) {
    X *p = reinterpret_cast<X *>(at);
    at += (count * sizeof(X) + 127) / 128 * 128;
    return p;
  }
};

/// The forward's shared memory (AttentionTcForward.cu).
template <typename T, int D> struct ForwardLayout {
  T *q, *k, *v;   // tiles; k and v then stage the results (kTwoTilesStage)
  float *scores;  // per warp, 16 x 64
  T *probs;       // per warp, 16 x 64
  float *factors; // per warp, one a row
  size_t bytes;
  __host__ __device__ explicit ForwardLayout(uintptr_t base) {
    Carve c{base};
    q = c.take<T>(kTile * kRowStride<D>);
    k = c.take<T>(kTile * kRowStride<D>);
    v = c.take<T>(kTile * kRowStride<D>);
    scores = c.take<float>(kStripWarps * kStrip * kScoreStride);
    probs = c.take<T>(kStripWarps * kStrip * kProbStride);
    factors = c.take<float>(kStripWarps * kStrip);
    bytes = c.at - base;
  }
};

/// The backward's (AttentionTcBackward.cu).
template <typename T, int D> struct BackwardLayout {
  T *rowsA, *rowsB;      // the block's own tiles: q and dy (dq), k and v (dk, dv)
  T *tileA, *tileB;      // the tiles it walks: k and v (dq), q and dy (dk, dv)
  float *scores, *dprobs; // per warp, 16 x 64
  T *probs, *grads;       // per warp, 16 x 64
  float *lse, *dot;       // the walked queries' (dk, dv)
  size_t bytes;
  __host__ __device__ explicit BackwardLayout(uintptr_t base) {
    Carve c{base};
    rowsA = c.take<T>(kTile * kRowStride<D>);
    rowsB = c.take<T>(kTile * kRowStride<D>);
    tileA = c.take<T>(kTile * kRowStride<D>);
    tileB = c.take<T>(kTile * kRowStride<D>);
    scores = c.take<float>(kStripWarps * kStrip * kScoreStride);
    dprobs = c.take<float>(kStripWarps * kStrip * kScoreStride);
    probs = c.take<T>(kStripWarps * kStrip * kProbStride);
    grads = c.take<T>(kStripWarps * kStrip * kProbStride);
    lse = c.take<float>(kTile);
    dot = c.take<float>(kTile);
    bytes = c.at - base;
  }
  /// Where warp `w` stages its results: the walked tiles' space.
  __device__ float *staging(int w) const {
    return reinterpret_cast<float *>(tileA) + w * kStrip * kStageStride<D>;
  }
};

/// Rows [row0, row0 + 64) of head `head` of batch `b` of a [batch, seq,
/// heads, D] tensor into `tile`, zeros past `seq`; 16 bytes a load.
template <typename T, int D>
__device__ void loadTile(T *tile, const void *src, int64_t b, int64_t row0, int64_t seq,
                         int64_t heads, int64_t head) {
  constexpr int kVector = 16 / sizeof(T), kPerRow = D / kVector;
  const T *base = static_cast<const T *>(src) + (b * seq * heads + head) * D;
  for (int e = threadIdx.x; e < kTile * kPerRow; e += blockDim.x) {
    int r = e / kPerRow, col = e % kPerRow * kVector;
    uint4 v = make_uint4(0, 0, 0, 0);
    if (row0 + r < seq)
      v = *reinterpret_cast<const uint4 *>(base + (row0 + r) * heads * D + col);
    *reinterpret_cast<uint4 *>(tile + r * kRowStride<D> + col) = v;
  }
}

/// The strip's products with each of the tile's four 16-row blocks,
/// transposed: strip (16 x D) times tile^T (D x 64), into `scores`
/// (16 x 64, kScoreStride). Q K^T, dY V^T, and for dk and dv K Q^T, V dY^T.
template <typename T, int D>
__device__ void stripTimesTileT(float *scores, const T *strip, const T *tile) {
  Acc out[kTile / 16];
#pragma unroll
  for (Acc &o : out)
    wmma::fill_fragment(o, 0.0f);
#pragma unroll
  for (int kk = 0; kk < D; kk += 16) {
    RowsA<T> a;
    wmma::load_matrix_sync(a, strip + kk, kRowStride<D>);
#pragma unroll
    for (int n = 0; n < kTile / 16; ++n) {
      ColsB<T> bt;
      wmma::load_matrix_sync(bt, tile + n * 16 * kRowStride<D> + kk, kRowStride<D>);
      wmma::mma_sync(out[n], a, bt, out[n]);
    }
  }
#pragma unroll
  for (int n = 0; n < kTile / 16; ++n)
    wmma::store_matrix_sync(scores + n * 16, out[n], kScoreStride, wmma::mem_row_major);
  __syncwarp();
}

/// out += probs (16 x 64, kProbStride) times tile (64 x D): P V, dS K, and
/// for dk and dv P^T dY, dS^T Q.
template <typename T, int D>
__device__ void stripTimesTile(Acc (&out)[D / 16], const T *probs, const T *tile) {
#pragma unroll
  for (int kk = 0; kk < kTile; kk += 16) {
    RowsA<T> a;
    wmma::load_matrix_sync(a, probs + kk, kProbStride);
#pragma unroll
    for (int n = 0; n < D / 16; ++n) {
      RowsB<T> b;
      wmma::load_matrix_sync(b, tile + kk * kRowStride<D> + n * 16, kRowStride<D>);
      wmma::mma_sync(out[n], a, b, out[n]);
    }
  }
}

/// An accumulator whose every element holds its row: the row of each of a
/// lane's elements in any accumulator. WMMA leaves the layout to the
/// architecture, but one type has one layout: mma_sync adds to an
/// accumulator that load_matrix_sync may have filled, so what it computes
/// lands where a load puts the same element. `scratch`: 256 f32 of the
/// warp's own.
__device__ inline Acc rowsOfAccumulators(float *scratch) {
  for (int e = threadIdx.x % 32; e < 256; e += 32)
    scratch[e] = float(e / 16);
  __syncwarp();
  Acc rows;
  wmma::load_matrix_sync(rows, scratch, 16, wmma::mem_row_major);
  __syncwarp();
  return rows;
}

/// Writes a strip's sums to rows [row0, row0 + 16) of head `head` of batch
/// `b` of `dst` ([batch, seq, heads, D]), each rounded once to dst's dtype as
/// the CPU rounds; rows past `seq` are left. Through the warp's `staging`
/// (16 rows of kStageStride f32).
template <int D>
__device__ void storeStrip(const Acc (&sums)[D / 16], float *staging, const View &dst,
                           int64_t b, int64_t row0, int64_t seq, int64_t heads, int64_t head) {
  __syncwarp();
#pragma unroll
  for (int n = 0; n < D / 16; ++n)
    wmma::store_matrix_sync(staging + n * 16, sums[n], kStageStride<D>, wmma::mem_row_major);
  __syncwarp();
  for (int e = threadIdx.x % 32; e < kStrip * D; e += 32) {
    int r = e / D, x = e % D;
    if (row0 + r < seq)
      cuda::store(dst.data, dst.dtype, ((b * seq + row0 + r) * heads + head) * D + x,
                  staging[r * kStageStride<D> + x]);
  }
  __syncwarp();
}

/// The row's scores against the tile of keys from k0, kept or -inf
/// (causal, past seq_k, a row past seq_q), from the strip's products
/// `scores`; returns their maximum over the whole row (both lanes).
__device__ inline float rowScores(float (&s)[kHalfRow], const float *scores, const Dims &m,
                                  int64_t b, int64_t head, int64_t i, int64_t k0) {
  int lane = threadIdx.x % 32, r = lane / 2, half = lane % 2;
  float most = -INFINITY;
#pragma unroll
  for (int t = 0; t < kHalfRow; ++t) {
    int64_t j = k0 + 2 * t + half;
    bool kept = i < m.sq && j < m.sk && !(m.causal && j > i);
    s[t] = kept ? m.score(scores[r * kScoreStride + 2 * t + half], b, head, i, j) : -INFINITY;
    most = fmaxf(most, s[t]);
  }
  return fmaxf(most, __shfl_xor_sync(0xffffffffu, most, 1));
}

/// The keys the queries of the block from q0 see: causal, up to the last
/// query's own.
__device__ inline int64_t keysSeen(const Dims &m, int64_t q0) {
  if (!m.causal)
    return m.sk;
  int64_t lastQuery = q0 + kTile < m.sq ? q0 + kTile : m.sq;
  return lastQuery < m.sk ? lastQuery : m.sk;
}

/// Lets `kernel` take `bytes` of shared memory (above 48 KiB needs it),
/// once, at its first launch (before any capture).
template <auto kernel> void allowShared(size_t bytes) {
  static const bool allowed = [&] {
    AMPC_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)bytes));
    return true;
  }();
  (void)allowed;
}

} // namespace ampc::rt::cuda::attention

#endif
