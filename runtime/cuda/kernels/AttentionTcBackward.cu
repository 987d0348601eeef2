// The fused attention's backward on tensor cores: its two launches (the
// kernels: AttentionTcKernels.h).
#include "runtime/cuda/kernels/AttentionTcKernels.h"

namespace ampc::rt::cuda::attention {
namespace {

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
