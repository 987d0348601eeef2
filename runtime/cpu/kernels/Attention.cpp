// Fused attention and its gradient, the reference (docs/runtime.md,
// "Attention"). q [b, sq, h, d], k [b, sk, h, d], v [b, sk, h, dv]. The
// forward takes each query row alone: keys in tiles of 64, an online
// softmax (running maximum m and sum l in f32, the partial output rescaled
// by exp(m_old - m_new) per tile), f32 accumulation, one rounding of the
// result. Nothing seq_q x seq_k is stored; with a second result, each row's
// log-sum-exp m + log(l) is kept (f32 [b, sq, h]). The backward reads it
// where given (attention-lse), else computes it again by the forward's
// tiles (the same bits), and recomputes the scores (FlashAttention-2): with D_i = dy_i . y_i,
// P = exp(s - lse), dV += P dy, dS = P (dy . v - D), dQ += scale dS k,
// dK += scale dS q; each (batch, head) is one task, so the sums over rows
// run in one fixed order. Dropout (in training) multiplies each probability
// by its factor f (0, or 1/(1-rate)) where it meets v: the forward sums
// f p v, and the backward takes dV += f P dy, dS = P (f dy . v - D). A
// bias is added to each scaled score (s = q . k scale + bias); a row whose
// scores are all -inf has no probabilities: its output and gradients are 0.
#include <cmath>
#include <limits>
#include <optional>

#include "runtime/core/StepVariants.h"
#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Random.h"

namespace ampc::rt {
namespace {

constexpr int64_t kKeyTile = 64;
constexpr float kMinusInf = -std::numeric_limits<float>::infinity();

struct Dims {
  int64_t batch, sq, sk, heads, d, dv;
  float scale;
  bool causal;
  AttentionOperands operands;
  /// Dropout: the stream of this run, and the probabilities' factor where
  /// kept; rate 0: none.
  uint64_t stream = 0;
  double rate = 0;
  float keep = 1;
  /// The factor of probability (b, head, i, j): 0 where dropped, else `keep`
  /// (`dropout`'s bits for a [b, heads, sq, sk] tensor).
  float dropFactor(int64_t b, int64_t head, int64_t i, int64_t j) const {
    if (rate == 0)
      return 1.0f;
    uint64_t at = (uint64_t)(((b * heads + head) * sq + i) * sk + j);
    return num::uniformAt(stream, at) < rate ? 0.0f : keep;
  }
  /// The first element of row `pos` of head `head` in a [b, seq, h, width] tensor.
  int64_t at(int64_t b, int64_t pos, int64_t seq, int64_t head, int64_t width) const {
    return ((b * seq + pos) * heads + head) * width;
  }
  /// The keys query i attends to: all, or j <= i when causal.
  int64_t keys(int64_t i) const { return causal ? std::min(i + 1, sk) : sk; }
  /// The bias, f32, and its strides over [b, heads, sq, sk] (0 where broadcast).
  const float *bias = nullptr;
  std::vector<int64_t> biasStride;
  /// Score (b, head, i, j) from its dot product q_i . k_j.
  float score(float dot, int64_t b, int64_t head, int64_t i, int64_t j) const {
    float s = dot * scale;
    return bias ? s + bias[b * biasStride[0] + head * biasStride[1] + i * biasStride[2] +
                           j * biasStride[3]]
                : s;
  }
};

/// Points `m` at the step's bias, if any, read as f32 through `holder`.
void readBias(const KernelContext &c, Dims &m, std::optional<F32In> &holder) {
  if (m.operands.bias < 0)
    return;
  const TensorRef &t = c.in[m.operands.bias];
  holder.emplace(t);
  m.bias = holder->data();
  m.biasStride = broadcastStrides(t.shape, 4);
}

Dims dimsOf(const KernelContext &c) {
  const std::vector<int64_t> &q = c.in[0].shape, &k = c.in[1].shape, &v = c.in[2].shape;
  Dims m{q[0], q[1], k[1], q[2], q[3], v[3], 0, attrBool(c, "causal", false),
         attentionOperandsOf(c.step, c.attrs)};
  m.scale = float(attrF64(c, "scale", 1.0 / std::sqrt(double(m.d))));
  if (c.training && m.operands.dropout > 0) { // the run counter: docs/runtime.md, "Counters"
    uint64_t iteration = 0;
    std::memcpy(&iteration, c.in[m.operands.counter].data, sizeof iteration);
    m.stream = num::dropoutStream(c.seed, (uint64_t)attrInt(c, "seed", 0), iteration);
    m.rate = m.operands.dropout;
    m.keep = 1.0f / float(1.0 - m.rate);
  }
  return m;
}

/// a . b in f32, eight partial sums added in a fixed order.
float dot(const float *a, const float *b, int64_t n) {
  float lane[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l)
      lane[l] += a[i + l] * b[i + l];
  for (; i < n; ++i)
    lane[i % 8] += a[i] * b[i];
  return ((lane[0] + lane[1]) + (lane[2] + lane[3])) + ((lane[4] + lane[5]) + (lane[6] + lane[7]));
}

/// Row i's log-sum-exp of its scores, by the forward's tiles.
float logSumExp(const Dims &m, const float *K, int64_t b, int64_t head, const float *qi,
                int64_t i) {
  float mx = kMinusInf, l = 0;
  for (int64_t j0 = 0, n = m.keys(i); j0 < n; j0 += kKeyTile) {
    float s[kKeyTile], tileMax = kMinusInf;
    int64_t j1 = std::min(n, j0 + kKeyTile);
    for (int64_t j = j0; j < j1; ++j)
      tileMax = std::max(tileMax, s[j - j0] = m.score(dot(qi, K + m.at(b, j, m.sk, head, m.d), m.d),
                                                      b, head, i, j));
    float next = std::max(mx, tileMax);
    if (next == kMinusInf)
      continue; // every score so far masked
    l *= next == mx ? 1.0f : std::exp(mx - next);
    for (int64_t j = j0; j < j1; ++j)
      l += std::exp(s[j - j0] - next);
    mx = next;
  }
  return mx + std::log(l);
}

void attention(KernelContext &c) {
  Dims m = dimsOf(c);
  F32In q(c.in[0]), k(c.in[1]), v(c.in[2]);
  std::optional<F32In> bias;
  readBias(c, m, bias);
  F32Out y(c.out[0]);
  float *lse = c.out.size() > 1 ? c.out[1].as<float>() : nullptr; // [b, sq, h]: row r
  int64_t rows = m.batch * m.sq * m.heads;
#pragma omp parallel
  {
    std::vector<float> acc(m.dv);
#pragma omp for schedule(static)
    for (int64_t r = 0; r < rows; ++r) {
      int64_t head = r % m.heads, i = r / m.heads % m.sq, b = r / m.heads / m.sq;
      const float *qi = q.data() + m.at(b, i, m.sq, head, m.d);
      float mx = kMinusInf, l = 0;
      std::fill(acc.begin(), acc.end(), 0.0f);
      for (int64_t j0 = 0, n = m.keys(i); j0 < n; j0 += kKeyTile) {
        float s[kKeyTile], tileMax = kMinusInf;
        int64_t j1 = std::min(n, j0 + kKeyTile);
        for (int64_t j = j0; j < j1; ++j)
          tileMax = std::max(tileMax, s[j - j0] = m.score(dot(qi, k.data() + m.at(b, j, m.sk, head,
                                                                                  m.d), m.d),
                                                          b, head, i, j));
        float next = std::max(mx, tileMax);
        if (next == kMinusInf)
          continue; // every score so far masked
        if (next != mx) { // rescale what the earlier tiles summed
          float correction = std::exp(mx - next);
          l *= correction;
          for (float &a : acc)
            a *= correction;
        }
        for (int64_t j = j0; j < j1; ++j) {
          float p = std::exp(s[j - j0] - next), pv = p * m.dropFactor(b, head, i, j);
          const float *vj = v.data() + m.at(b, j, m.sk, head, m.dv);
          l += p;
          for (int64_t x = 0; x < m.dv; ++x)
            acc[x] += pv * vj[x];
        }
        mx = next;
      }
      float *yi = y.data() + m.at(b, i, m.sq, head, m.dv);
      for (int64_t x = 0; x < m.dv; ++x)
        yi[x] = l > 0 ? acc[x] / l : 0.0f;
      if (lse)
        lse[r] = mx + std::log(l);
    }
  }
  y.commit();
}

void attentionBackward(KernelContext &c) {
  Dims m = dimsOf(c);
  F32In q(c.in[0]), k(c.in[1]), v(c.in[2]), y(c.in[3]), dy(c.in[4]);
  std::optional<F32In> bias;
  readBias(c, m, bias);
  const float *savedLse =
      m.operands.lse >= 0 ? c.in[m.operands.lse].as<float>() : nullptr; // [b, sq, h]
  F32Out dq(c.out[0]), dk(c.out[1]), dv(c.out[2]);
  const float *Q = q.data(), *K = k.data(), *V = v.data();
#pragma omp parallel for schedule(static)
  for (int64_t task = 0; task < m.batch * m.heads; ++task) {
    int64_t b = task / m.heads, head = task % m.heads;
    for (int64_t j = 0; j < m.sk; ++j) { // this task's rows of dK and dV, from zero
      std::fill_n(dk.data() + m.at(b, j, m.sk, head, m.d), m.d, 0.0f);
      std::fill_n(dv.data() + m.at(b, j, m.sk, head, m.dv), m.dv, 0.0f);
    }
    for (int64_t i = 0; i < m.sq; ++i) {
      const float *qi = Q + m.at(b, i, m.sq, head, m.d);
      const float *dyi = dy.data() + m.at(b, i, m.sq, head, m.dv);
      float lse = savedLse ? savedLse[(b * m.sq + i) * m.heads + head]
                           : logSumExp(m, K, b, head, qi, i);
      float D = dot(dyi, y.data() + m.at(b, i, m.sq, head, m.dv), m.dv);
      float *dqi = dq.data() + m.at(b, i, m.sq, head, m.d);
      std::fill_n(dqi, m.d, 0.0f);
      for (int64_t j = 0, n = lse == kMinusInf ? 0 : m.keys(i); j < n; ++j) {
        const float *kj = K + m.at(b, j, m.sk, head, m.d), *vj = V + m.at(b, j, m.sk, head, m.dv);
        float p = std::exp(m.score(dot(qi, kj, m.d), b, head, i, j) - lse),
              drop = m.dropFactor(b, head, i, j);
        float ds = p * (drop * dot(dyi, vj, m.dv) - D) * m.scale;
        float *dkj = dk.data() + m.at(b, j, m.sk, head, m.d);
        float *dvj = dv.data() + m.at(b, j, m.sk, head, m.dv);
        for (int64_t x = 0; x < m.dv; ++x)
          dvj[x] += p * drop * dyi[x];
        for (int64_t x = 0; x < m.d; ++x) {
          dqi[x] += ds * kj[x];
          dkj[x] += ds * qi[x];
        }
      }
    }
  }
  dq.commit();
  dk.commit();
  dv.commit();
}

} // namespace

void addAttentionKernels(KernelTable &t) {
  t[Kernel::Attention] = attention;
  t[Kernel::AttentionBackward] = attentionBackward;
}

} // namespace ampc::rt
