// The scores q_i . k_j * scale of a fused attention, visited one by one on
// the host: each an f32 dot product in order, only those a causal mask
// keeps (j <= i). The doctor's probe (record_scores_range) and
// --check-numerics (an attention named as the first non-finite op) both
// report their largest magnitude: the fused op computes them in f32 and
// never stores them (docs/precision-doctor.md, "Attention").
#ifndef AMPC_RUNTIME_NUMERICS_ATTENTIONSCORES_H
#define AMPC_RUNTIME_NUMERICS_ATTENTIONSCORES_H

#include <algorithm>
#include <cstdint>

namespace ampc::num {

/// q [batch, sq, heads, d] and k [batch, sk, heads, d] as f32; calls
/// visit(score) for each kept score and returns how many there were.
template <typename Visit>
int64_t forEachAttentionScore(const float *q, const float *k, int64_t batch, int64_t sq,
                              int64_t sk, int64_t heads, int64_t d, bool causal, float scale,
                              Visit &&visit) {
  int64_t count = 0;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < sq; ++i) {
        const float *qi = q + ((b * sq + i) * heads + h) * d;
        int64_t keys = causal ? std::min(i + 1, sk) : sk;
        for (int64_t j = 0; j < keys; ++j) {
          const float *kj = k + ((b * sk + j) * heads + h) * d;
          float dot = 0;
          for (int64_t x = 0; x < d; ++x)
            dot += qi[x] * kj[x];
          visit(dot * scale);
        }
        count += keys;
      }
  return count;
}

} // namespace ampc::num

#endif
