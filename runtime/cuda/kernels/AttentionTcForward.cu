// The fused attention's forward on tensor cores: its launch and when it is taken
// (the kernels: AttentionTcKernels.h).
#include "runtime/core/StepVariants.h"
#include "runtime/cuda/kernels/AttentionTcKernels.h"

namespace ampc::rt::cuda::attention {
namespace {

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
