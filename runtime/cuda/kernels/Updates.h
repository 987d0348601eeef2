// What the optimizer kernels share, one tensor at a time (Training.cu) or a
// run of tensors in one launch (TrainingMultiTensor.cu): the scalars they read on
// the device and the gradient as the CPU's update sees it.
#ifndef AMPC_RUNTIME_CUDA_UPDATES_H
#define AMPC_RUNTIME_CUDA_UPDATES_H

#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/Optimizers.h"

namespace ampc::rt::cuda {

/// The scalars an update reads on the device: lr, found_inf, grad_scale.
struct UpdateScalars {
  View lr;
  const uint8_t *found;
  View gradScale; // data null: the gradient is already unscaled
};

/// An update's settings (UpdateConfig) as the kernels take them: what the
/// update computes in f32 narrowed, as the CPU's update narrows it.
struct UpdateSettings {
  float momentum, decay;
  bool nesterov, decoupled;
  double beta1, beta2, epsilon, weightDecay;
  double alpha, momentumF64; // rmsprop's, in f64 as its update takes them
  bool centered;
};

/// The update's operands (runtime/core/StepVariants.h).
inline UpdateOperands operandsOf(const LaunchContext &c) {
  return updateOperandsOf(c.step, c.attrs);
}

/// The param's low-precision copy the update rewrites in the same pass
/// (docs/runtime.md, "Weight copies"); data null: none.
inline View copyView(const LaunchContext &c) {
  int copy = operandsOf(c).copy;
  return copy >= 0 ? viewOf(c.in[copy]) : View{nullptr, DType::F16, 0, 0, {}};
}

inline UpdateScalars scalarsOf(const LaunchContext &c) {
  using U = UpdateOperands;
  View none{nullptr, DType::F32, 0, 0, {}};
  int scale = operandsOf(c).gradScale;
  return {viewOf(c.in[U::lr]), c.in[U::foundInf].as<uint8_t>(),
          scale >= 0 ? viewOf(c.in[scale]) : none};
}

inline UpdateSettings settingsOf(const LaunchContext &c) {
  UpdateConfig u = updateConfigOf(c.step, c.attrs);
  return {narrow(u.momentum), narrow(u.weightDecay), u.nesterov, u.decoupled, u.beta1,
          u.beta2,            u.epsilon,             u.weightDecay, u.alpha,  u.momentum,
          u.centered};
}

__device__ inline num::SgdUpdate sgdUpdate(float lr, const UpdateSettings &s) {
  return {lr, s.decay};
}

__device__ inline num::MomentumUpdate momentumUpdate(float lr, const UpdateSettings &s) {
  return {lr, s.momentum, s.decay, s.nesterov};
}

__device__ inline num::LionUpdate lionUpdate(float lr, const UpdateSettings &s) {
  return {lr, s.beta1, s.beta2, s.weightDecay};
}

__device__ inline num::RmspropUpdate rmspropUpdate(float lr, const UpdateSettings &s) {
  return {lr, s.decay, s.alpha, s.epsilon, s.momentumF64, s.centered};
}

__device__ inline num::AdagradUpdate adagradUpdate(float lr, const UpdateSettings &s) {
  return {lr, s.decay, s.epsilon};
}

/// The update's per-step constants (two double pow()s), computed by one
/// thread of the block and shared: every thread computing them cost more
/// than its elements' updates. Every thread of the block must call it.
__device__ inline num::AdamUpdate blockAdamUpdate(float lr, const UpdateSettings &cfg, View step) {
  __shared__ num::AdamUpdate shared;
  if (threadIdx.x == 0)
    shared = num::AdamUpdate::at(lr, cfg.beta1, cfg.beta2, cfg.epsilon, cfg.weightDecay,
                                 load(step.data, step.dtype, 0), cfg.decoupled);
  __syncthreads();
  return shared;
}

/// 1 / grad_scale, as the CPU computes it once per update, or 1.
__device__ inline float inverseScale(const UpdateScalars &s) {
  return s.gradScale.data ? 1.0f / load(s.gradScale.data, s.gradScale.dtype, 0) : 1.0f;
}

/// Stores the updated param value, and its rounding into the copy if any.
__device__ inline void storeUpdated(View p, View copy, int64_t i, float value) {
  store(p.data, p.dtype, i, value);
  if (copy.data)
    store(copy.data, copy.dtype, i, value);
}

/// A gradient value as the CPU's update sees it: unscaled where the update
/// reads the scale.
__device__ inline float unscaled(const UpdateScalars &s, float inverse, float g) {
  return s.gradScale.data ? g * inverse : g;
}

/// The gradient of element i as the CPU's update sees it.
__device__ inline float gradientAt(const void *g, DType type, const UpdateScalars &s,
                                   float inverse, int64_t i) {
  return unscaled(s, inverse, load(g, type, i));
}

} // namespace ampc::rt::cuda

#endif
