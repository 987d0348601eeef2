// The weights' exponential moving average (docs/training.md, "Weight
// averaging (EMA)"): one launch per trained param after the optimizer's
// updates, reading found_inf and the step count on the device. The math is
// runtime/numerics' EmaUpdate, as on the CPU.
#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/Optimizers.h"

namespace ampc::rt::cuda {
namespace {

/// average := lerp(average, value, 1 - d) unless found_inf; `step` (data
/// null: no warmup) the applied optimizer steps.
__global__ void emaKernel(float *average, View value, const uint8_t *found, View step,
                          double decay) {
  if (*found)
    return;
  num::EmaUpdate update =
      num::EmaUpdate::at(decay, step.data != nullptr,
                         step.data ? (double)load(step.data, step.dtype, 0) : 0.0);
  AMPC_GRID_STRIDE(i, value.size) {
    update(average[i], load(value.data, value.dtype, i));
  }
}

void ema(LaunchContext &c) {
  View none{nullptr, DType::F32, 0, 0, {}};
  View step = c.in.size() > 3 ? viewOf(c.in[3]) : none;
  emaKernel<<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(
      c.in[0].as<float>(), viewOf(c.in[1]), c.in[2].as<uint8_t>(), step,
      c.attrs.getF64("decay", 0.0));
  launched(c);
}

} // namespace

void addAverageKernels(KernelTable &t) { t[Kernel::Ema] = ema; }

} // namespace ampc::rt::cuda
