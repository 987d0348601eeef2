// Kernel signatures of the training kernels (KernelSignatures.h): the finite
// checks, the collective, the loss-scale update, the optimizer updates and
// the state steps around them.
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt::signature {

void checkFiniteAndUnscale(const StepView &s) {
  size_t n = s.step.inputs.size() - 1;
  s.require(isFloatScalar(s.in(n)), "the scale must be a float scalar");
  s.require(isFlag(s.out(n)), "found_inf must be an i1 scalar");
  for (size_t i = 0; i < n; ++i) {
    s.require(isFloat(s.in(i).dtype), "gradients must be float tensors");
    s.require(s.out(i).dtype == DType::F32, "unscaled gradients must be f32");
    requireSameSize(s, s.in(i), s.out(i));
  }
}

void checkFinite(const StepView &s) {
  for (int id : s.step.inputs)
    s.require(isFloat(s.plan.buffers[id].dtype), "gradients must be float tensors");
  s.require(isFlag(s.out(0)), "found_inf must be an i1 scalar");
}

/// [scale, grads...] -> norm: the gradients floats, the scale and the norm
/// float scalars.
void gradNorm(const StepView &s) {
  s.require(isFloatScalar(s.in(0)), "the scale must be a float scalar");
  for (size_t i = 1; i < s.step.inputs.size(); ++i)
    s.require(isFloat(s.in(i).dtype), "gradients must be float tensors");
  s.require(isFloatScalar(s.out(0)), "the norm is a float scalar");
}

/// grad_norm's, and found_inf as the second output.
void checkFiniteNorm(const StepView &s) {
  gradNorm(s);
  s.require(isFlag(s.out(1)), "found_inf must be an i1 scalar");
}

void clipScale(const StepView &s) {
  s.require(isFloatScalar(s.in(0)) && isFloatScalar(s.in(1)) && isFloatScalar(s.out(0)),
            "the norm, the scale and the result are float scalars");
  s.require(s.attrs.getF64("max_norm", 0) > 0, "max_norm must be positive");
}

void allReduce(const StepView &s) {
  s.require(s.attrs.getInt("world_size", 1) >= 1, "world_size must be at least 1");
  std::string reduce = s.attrs.getStr("reduce", "sum");
  s.require(reduce == "sum" || reduce == "max", "reduce must be sum or max");
  DType dtype = s.in(0).dtype;
  s.require(reduce == "sum" || dtype == DType::F32, "a max is taken over f32 tensors");
  for (size_t i = 0; i < s.step.inputs.size(); ++i) {
    s.require(isFloat(s.in(i).dtype) && s.in(i).dtype == dtype,
              "a bucket holds float tensors of one dtype");
    s.require(s.out(i).dtype == dtype, "the sums keep their tensors' dtype");
    requireShape(s, s.out(i), s.in(i).shape);
  }
}

void updateLossScaling(const StepView &s) {
  s.require(isFlag(s.in(0)), "found_inf must be an i1 scalar");
  for (size_t i = 1; i < 4; ++i)
    s.require(isFloatScalar(s.in(i)), "the scale and its counters must be float scalars");
}

void fp8ScaleUpdate(const StepView &s) {
  const Buffer &history = s.in(0);
  s.require(history.dtype == DType::F32 && history.shape.size() == 1 && history.shape[0] >= 1,
            "the amax history must be a 1-D f32 tensor of at least one amax");
  for (size_t i = 1; i < 4; ++i)
    s.require(s.in(i).dtype == DType::F32 && isScalar(s.in(i)),
              "scale, scale_inv and amax must be f32 scalars");
  double top = s.attrs.getF64("fp8_max", 448.0);
  int64_t margin = s.attrs.getInt("margin", 0);
  std::string compute = s.attrs.getStr("amax_compute", "max");
  s.require(top > 0 && top <= 3.0e38, "fp8_max must be positive and finite in f32");
  s.require(margin >= 0 && margin <= 127, "margin must be in [0, 127]");
  s.require(compute == "max" || compute == "most_recent",
            "amax_compute must be max or most_recent");
}

/// The operands of UpdateOperands: the moments f32 and of the param's
/// size, the scalars float, the copy a float tensor of the param's shape.
void update(const StepView &s) {
  using U = UpdateOperands;
  U u = updateOperandsOf(s.step, s.attrs);
  const Buffer &p = s.in(U::param), &g = s.in(U::grad);
  if (u.copy >= 0) {
    const Buffer &c = s.in(u.copy);
    s.require(isFloat(c.dtype) && c.shape == p.shape,
              "the copy must be a float tensor of the param's shape");
  }
  s.require(isFloat(p.dtype) && isFloat(g.dtype), "the param and its gradient must be floats");
  requireSameSize(s, p, g);
  s.require(isFloatScalar(s.in(U::lr)), "lr must be a float scalar");
  s.require(isFlag(s.in(U::foundInf)), "found_inf must be an i1 scalar");
  for (int i = U::firstMoment; i < U::firstMoment + u.moments; ++i) {
    s.require(s.in(i).dtype == DType::F32, "optimizer state must be f32");
    requireSameSize(s, p, s.in(i));
  }
  if (u.stepCount >= 0)
    s.require(isFloatScalar(s.in(u.stepCount)), "the step count must be a float scalar");
  if (u.gradScale >= 0)
    s.require(isFloatScalar(s.in(u.gradScale)), "grad_scale must be a float scalar");
}

void sgd(const StepView &s) { update(s); }
void momentum(const StepView &s) { update(s); }
void adam(const StepView &s) { update(s); }
void lamb(const StepView &s) { update(s); }
void lion(const StepView &s) { update(s); }
void rmsprop(const StepView &s) {
  update(s);
  UpdateConfig c = updateConfigOf(s.step, s.attrs);
  s.require(c.alpha >= 0.0 && c.alpha < 1.0, "alpha must be in [0, 1)");
  s.require(c.momentum >= 0.0 && c.momentum < 1.0, "momentum must be in [0, 1)");
  s.require(c.epsilon > 0.0, "epsilon must be positive");
}
void adagrad(const StepView &s) {
  update(s);
  s.require(updateConfigOf(s.step, s.attrs).epsilon > 0.0, "epsilon must be positive");
}

void countStep(const StepView &s) {
  s.require(isFloatScalar(s.in(0)), "the step count must be a float scalar");
  s.require(s.step.inputs.size() < 2 || isFlag(s.in(1)), "found_inf must be an i1 scalar");
}

/// [average, value, found_inf, step?]: the average f32, the value a float
/// tensor of its size.
void ema(const StepView &s) {
  s.require(s.in(0).dtype == DType::F32, "the average must be f32");
  s.require(isFloat(s.in(1).dtype), "the averaged value must be a float tensor");
  requireSameSize(s, s.in(0), s.in(1));
  s.require(isFlag(s.in(2)), "found_inf must be an i1 scalar");
  s.require(s.step.inputs.size() < 4 || isFloatScalar(s.in(3)),
            "the step count must be a float scalar");
  double decay = s.attrs.getF64("decay", -1.0);
  s.require(decay >= 0.0 && decay < 1.0, "decay must be in [0, 1)");
}

void lrSchedule(const StepView &s) {
  lrScheduleOf(s.step, s.attrs);
  for (size_t i = 0; i < 3; ++i)
    s.require(isFloatScalar(s.in(i)), "the peak, the step and the total must be float scalars");
  s.require(isFloatScalar(s.out(0)), "the rate is a float scalar");
}

void assign(const StepView &s) {
  requireSameSize(s, s.in(0), s.in(1));
  s.require(s.in(0).dtype == s.in(1).dtype || (isFloat(s.in(0).dtype) && isFloat(s.in(1).dtype)),
            "target and value need one dtype, or both float");
}

void restoreIfSkipped(const StepView &s) {
  s.require(s.in(0).dtype == s.in(1).dtype, "target and backup need one dtype");
  requireSameSize(s, s.in(0), s.in(1));
  s.require(isFlag(s.in(2)), "found_inf must be an i1 scalar");
}

void accumulate(const StepView &s) {
  requireFloats(s);
  requireSameSize(s, s.in(0), s.in(1));
}

void increment(const StepView &s) {
  s.require(s.in(0).dtype == DType::I64 && isScalar(s.in(0)), "the counter must be an i64 scalar");
  if (s.step.inputs.size() > 1)
    s.require(isFlag(s.in(1)), "the flag must be an i1 scalar");
}

} // namespace ampc::rt::signature
