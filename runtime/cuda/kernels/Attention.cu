// Fused attention and its gradient on the GPU (docs/runtime.md,
// "Attention"). Where the tensor-core kernels take the step (f16 or bf16,
// head_dim 64 or 128: AttentionTcForward.cu, AttentionTcBackward.cu), they
// run; every other step runs the row kernels here, shaped as the CPU
// reference (runtime/cpu/kernels/Attention.cpp): one warp per query row,
// its lanes splitting head_dim; keys one at a time with an online softmax
// in f32; nothing seq_q x seq_k in memory. Their backward is two launches
// without atomics: one warp per query row for dQ (which also keeps each
// row's D = dy . y, and its log-sum-exp unless the forward kept it as its
// second result: attention-lse), one warp per key row for dK and dV. A bias
// is added to each scaled score; a row whose scores are all -inf has no
// probabilities (output and gradients 0), as on the CPU. Head_dim up to
// 256; the sums run in another order than the CPU's (Accumulated).
#include <cmath>

#include "runtime/core/StepVariants.h"
#include "runtime/cuda/kernels/AttentionDims.h"

namespace ampc::rt::cuda {
namespace attention {

constexpr int kWarp = 32, kPerLane = 8, kMaxHeadDim = kWarp * kPerLane;

Dims dimsOf(const LaunchContext &c) {
  const std::vector<int64_t> &q = c.in[0].shape, &k = c.in[1].shape, &v = c.in[2].shape;
  Dims m{q[0], q[1], k[1], q[2], q[3], v[3], 0, c.attrs.getBool("causal", false)};
  m.scale = float(c.attrs.getF64("scale", 1.0 / std::sqrt(double(m.d))));
  AttentionOperands operands = attentionOperandsOf(c.step, c.attrs);
  if (operands.bias >= 0) {
    const TensorRef &t = c.in[operands.bias];
    m.bias = viewOf(t);
    alignedStrides(t.shape, t.shape, m.biasStride);
  }
  if (c.training && operands.dropout > 0) {
    m.iteration = c.in[operands.counter].as<uint64_t>();
    m.seed = c.seed;
    m.opSeed = (uint64_t)c.attrs.getInt("seed", 0);
    m.rate = operands.dropout;
    m.keep = 1.0f / float(1.0 - m.rate);
  }
  if (m.d > kMaxHeadDim || m.dv > kMaxHeadDim)
    c.fail("attention: head_dim above " + std::to_string(kMaxHeadDim) +
           " is not supported on CUDA");
  return m;
}

} // namespace attention

namespace {

using namespace attention;

/// A row of `width` values split over the warp: lane l holds l, l + 32, ...
struct LaneRow {
  float v[kPerLane];
  __device__ void load(const View &t, int64_t at, int64_t width, int lane) {
    for (int e = 0; e < kPerLane; ++e) {
      int64_t x = lane + e * kWarp;
      v[e] = x < width ? cuda::load(t.data, t.dtype, at + x) : 0.0f;
    }
  }
  __device__ void zero() {
    for (float &x : v)
      x = 0;
  }
  __device__ void store(const View &t, int64_t at, int64_t width, int lane) const {
    for (int e = 0; e < kPerLane; ++e) {
      int64_t x = lane + e * kWarp;
      if (x < width)
        cuda::store(t.data, t.dtype, at + x, v[e]);
    }
  }
};

/// The dot product of the warp's row `a` with the row of `t` at `at`, in every lane.
__device__ float warpDot(const LaneRow &a, const View &t, int64_t at, int64_t width, int lane) {
  float s = 0;
  for (int e = 0; e < kPerLane; ++e) {
    int64_t x = lane + e * kWarp;
    if (x < width)
      s += a.v[e] * cuda::load(t.data, t.dtype, at + x);
  }
  for (int offset = kWarp / 2; offset > 0; offset /= 2)
    s += __shfl_xor_sync(0xffffffffu, s, offset);
  return s;
}

__device__ int64_t warpIndex() { return (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) / kWarp; }
__device__ int64_t warpCount() { return int64_t(gridDim.x) * blockDim.x / kWarp; }

/// `lse` (or null): each row's log-sum-exp, [b, sq, h] as the rows run.
__global__ void attentionForward(View q, View k, View v, View y, float *lse, Dims m) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = warpIndex(); r < m.batch * m.sq * m.heads; r += warpCount()) {
    int64_t head = r % m.heads, i = r / m.heads % m.sq, b = r / m.heads / m.sq;
    LaneRow qi, acc;
    qi.load(q, m.at(b, i, m.sq, head, m.d), m.d, lane);
    acc.zero();
    float mx = -INFINITY, l = 0;
    uint64_t stream = m.stream();
    for (int64_t j = 0, n = m.keys(i); j < n; ++j) {
      float s = m.score(warpDot(qi, k, m.at(b, j, m.sk, head, m.d), m.d, lane), b, head, i, j);
      float next = fmaxf(mx, s);
      if (next == -INFINITY)
        continue; // every score so far masked
      if (next != mx) {
        float correction = expf(mx - next);
        l *= correction;
        for (float &a : acc.v)
          a *= correction;
        mx = next;
      }
      float p = expf(s - mx), pv = p * m.dropFactor(stream, b, head, i, j);
      l += p;
      LaneRow vj;
      vj.load(v, m.at(b, j, m.sk, head, m.dv), m.dv, lane);
      for (int e = 0; e < kPerLane; ++e)
        acc.v[e] += pv * vj.v[e];
    }
    for (float &a : acc.v)
      a = l > 0 ? a / l : 0.0f;
    acc.store(y, m.at(b, i, m.sq, head, m.dv), m.dv, lane);
    if (lse && lane == 0)
      lse[r] = mx + logf(l);
  }
}

/// dQ, one warp per query row; keeps the row's D, and its log-sum-exp
/// unless `savedLse` (the forward's).
__global__ void attentionBackwardQuery(View q, View k, View v, View y, View dy, View dq,
                                       const float *savedLse, float *lse, float *dot, Dims m) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = warpIndex(); r < m.batch * m.sq * m.heads; r += warpCount()) {
    int64_t head = r % m.heads, i = r / m.heads % m.sq, b = r / m.heads / m.sq;
    LaneRow qi, dyi, yi, g;
    qi.load(q, m.at(b, i, m.sq, head, m.d), m.d, lane);
    dyi.load(dy, m.at(b, i, m.sq, head, m.dv), m.dv, lane);
    yi.load(y, m.at(b, i, m.sq, head, m.dv), m.dv, lane);
    float mx = -INFINITY, l = 0, D = 0;
    int64_t n = m.keys(i);
    for (int64_t j = 0; j < n && !savedLse; ++j) {
      float s = m.score(warpDot(qi, k, m.at(b, j, m.sk, head, m.d), m.d, lane), b, head, i, j);
      float next = fmaxf(mx, s);
      if (next == -INFINITY)
        continue;
      l = l * (next == mx ? 1.0f : expf(mx - next)) + expf(s - next);
      mx = next;
    }
    for (int e = 0; e < kPerLane; ++e)
      D += dyi.v[e] * yi.v[e];
    for (int offset = kWarp / 2; offset > 0; offset /= 2)
      D += __shfl_xor_sync(0xffffffffu, D, offset);
    float rowLse = savedLse ? savedLse[r] : mx + logf(l);
    uint64_t stream = m.stream();
    g.zero();
    for (int64_t j = 0; j < (rowLse == -INFINITY ? 0 : n); ++j) { // none: all masked
      float p = expf(m.score(warpDot(qi, k, m.at(b, j, m.sk, head, m.d), m.d, lane), b, head, i,
                             j) -
                     rowLse);
      float drop = m.dropFactor(stream, b, head, i, j);
      float ds =
          p * (drop * warpDot(dyi, v, m.at(b, j, m.sk, head, m.dv), m.dv, lane) - D) * m.scale;
      LaneRow kj;
      kj.load(k, m.at(b, j, m.sk, head, m.d), m.d, lane);
      for (int e = 0; e < kPerLane; ++e)
        g.v[e] += ds * kj.v[e];
    }
    g.store(dq, m.at(b, i, m.sq, head, m.d), m.d, lane);
    if (lane == 0) {
      if (!savedLse)
        lse[r] = rowLse;
      dot[r] = D;
    }
  }
}

/// dK and dV, one warp per key row, from the rows' log-sum-exp and D.
__global__ void attentionBackwardKey(View q, View k, View v, View dy, View dk, View dv,
                                     const float *lse, const float *dot, Dims m) {
  int lane = threadIdx.x % kWarp;
  for (int64_t r = warpIndex(); r < m.batch * m.sk * m.heads; r += warpCount()) {
    int64_t head = r % m.heads, j = r / m.heads % m.sk, b = r / m.heads / m.sk;
    LaneRow kj, vj, gk, gv;
    kj.load(k, m.at(b, j, m.sk, head, m.d), m.d, lane);
    vj.load(v, m.at(b, j, m.sk, head, m.dv), m.dv, lane);
    gk.zero();
    gv.zero();
    uint64_t stream = m.stream();
    for (int64_t i = m.firstQuery(j); i < m.sq; ++i) {
      int64_t row = (b * m.sq + i) * m.heads + head;
      if (lse[row] == -INFINITY)
        continue; // a row with every score masked
      float p = expf(m.score(warpDot(kj, q, m.at(b, i, m.sq, head, m.d), m.d, lane), b, head, i,
                             j) -
                     lse[row]);
      float drop = m.dropFactor(stream, b, head, i, j);
      float ds =
          p * (drop * warpDot(vj, dy, m.at(b, i, m.sq, head, m.dv), m.dv, lane) - dot[row]) *
          m.scale;
      LaneRow qi, dyi;
      qi.load(q, m.at(b, i, m.sq, head, m.d), m.d, lane);
      dyi.load(dy, m.at(b, i, m.sq, head, m.dv), m.dv, lane);
      for (int e = 0; e < kPerLane; ++e) {
        gv.v[e] += p * drop * dyi.v[e];
        gk.v[e] += ds * qi.v[e];
      }
    }
    gk.store(dk, m.at(b, j, m.sk, head, m.d), m.d, lane);
    gv.store(dv, m.at(b, j, m.sk, head, m.dv), m.dv, lane);
  }
}

unsigned warpBlocks(int64_t rows) { return blocksFor(rows * kWarp); }

void attentionStep(LaunchContext &c) {
  Dims m = dimsOf(c);
  float *lse = c.out.size() > 1 ? c.out[1].as<float>() : nullptr;
  if (tensorCoresTake(c, m)) {
    forwardOnTensorCores(c, m, lse);
    return;
  }
  attentionForward<<<warpBlocks(m.batch * m.sq * m.heads), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.out[0]), lse, m);
  launched(c);
}

void attentionBackwardStep(LaunchContext &c) {
  Dims m = dimsOf(c);
  int64_t rows = m.batch * m.sq * m.heads;
  if (!c.state) // each query row's log-sum-exp and D, kept for the step
    c.state = c.device.allocate(2 * std::max<int64_t>(rows, 1) * sizeof(float), 256);
  float *lse = reinterpret_cast<float *>(c.state.get()), *dot = lse + rows;
  int lseInput = attentionOperandsOf(c.step, c.attrs).lse;
  const float *savedLse = lseInput >= 0 ? c.in[lseInput].as<float>() : nullptr;
  if (tensorCoresTake(c, m)) {
    backwardOnTensorCores(c, m, savedLse, lse, dot);
    return;
  }
  View q = viewOf(c.in[0]), k = viewOf(c.in[1]), v = viewOf(c.in[2]);
  attentionBackwardQuery<<<warpBlocks(rows), kThreads, 0, c.stream()>>>(
      q, k, v, viewOf(c.in[3]), viewOf(c.in[4]), viewOf(c.out[0]), savedLse, lse, dot, m);
  launched(c);
  attentionBackwardKey<<<warpBlocks(m.batch * m.sk * m.heads), kThreads, 0, c.stream()>>>(
      q, k, v, viewOf(c.in[4]), viewOf(c.out[1]), viewOf(c.out[2]), savedLse ? savedLse : lse,
      dot, m);
  launched(c);
}

} // namespace

void addAttentionKernels(KernelTable &t) {
  t[Kernel::Attention] = attentionStep;
  t[Kernel::AttentionBackward] = attentionBackwardStep;
}

} // namespace ampc::rt::cuda
