// Training kernels: the fused finite check, the loss-scaling rule, the
// optimizers and the state updates. Updates write their first operands'
// (persistent) buffers in place and do nothing when found_inf is set.
#include <algorithm>
#include <cmath>

#include "runtime/core/History.h"
#include "runtime/core/StepVariants.h"
#include "runtime/cpu/kernels/KernelUtil.h"
#include "runtime/numerics/Finite.h"
#include "runtime/numerics/Fp8Scaling.h"
#include "runtime/numerics/LossScale.h"
#include "runtime/numerics/Optimizers.h"

namespace ampc::rt {
namespace {

void setScalar(const TensorRef &t, float v) { fromF32(&v, t.data, t.dtype, 1); }

bool flag(const TensorRef &t) { return t.as<uint8_t>()[0] != 0; }

constexpr int64_t kChunk = 4096; // widened and used while in L1

void checkFiniteAndUnscale(KernelContext &c) {
  size_t n = c.out.size() - 1;
  float inverse = 1.0f / scalarF32(c.in[n]);
  bool found = false;
  for (size_t i = 0; i < n; ++i) {
    const TensorRef &grad = c.in[i];
    float *out = c.out[i].as<float>();
    int64_t size = grad.size(), chunks = (size + kChunk - 1) / kChunk;
    // v * 0 is NaN exactly when v is inf or NaN: a sum of those flags every
    // non-finite value without a branch, so the loop vectorises.
    float poison = 0.0f;
#pragma omp parallel for reduction(+ : poison) if (size > kParallelGrain)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      int64_t at = ch * kChunk, count = std::min(kChunk, size - at);
      const float *g = grad.dtype == DType::F32 ? grad.as<float>() + at : out + at;
      if (grad.dtype != DType::F32)
        readF32(grad, at, count, out + at);
      for (int64_t k = 0; k < count; ++k) {
        poison += g[k] * 0.0f;
        out[at + k] = g[k] * inverse;
      }
    }
    found |= poison != poison;
  }
  c.out[n].as<uint8_t>()[0] = found;
}

/// Eight f32 lanes (GCC's vector extension: AVX2 where the processor has
/// it, SSE pairs otherwise; lane by lane the same operations either way).
typedef float Lanes __attribute__((vector_size(32)));
constexpr int kLanes = 8;

/// The squares of v[0, n) * inverse (each product rounded to f32) summed:
/// element k into f32 lane k % 16 (a chunk's 4,096 elements leave 256 terms
/// a lane), the lanes then added pairwise in double: a fixed order whatever
/// the compiler and the processor (no FMA: the same roundings). `poison`
/// gathers v * 0, NaN exactly where a value is inf or NaN.
__attribute__((target_clones("avx2", "default"))) double squaresOf(const float *v, int64_t n,
                                                                   float inverse, float &poison) {
  Lanes a = {}, b = {}, seenA = {}, seenB = {};
  int64_t k = 0;
  for (; k + 2 * kLanes <= n; k += 2 * kLanes) {
    Lanes x, y;
    std::memcpy(&x, v + k, sizeof x);
    std::memcpy(&y, v + k + kLanes, sizeof y);
    Lanes ux = x * inverse, uy = y * inverse;
    a += ux * ux;
    b += uy * uy;
    seenA += x * 0.0f;
    seenB += y * 0.0f;
  }
  double sums[2 * kLanes];
  float seen = 0;
  for (int j = 0; j < kLanes; ++j) {
    sums[j] = a[j], sums[j + kLanes] = b[j];
    seen += seenA[j] + seenB[j];
  }
  for (; k < n; ++k) {
    float u = v[k] * inverse;
    sums[0] += double(u * u);
    seen += v[k] * 0.0f;
  }
  for (int width = kLanes; width > 0; width /= 2)
    for (int j = 0; j < width; ++j)
      sums[j] += sums[j + width];
  poison += seen;
  return sums[0];
}

/// The squares of grads * (1 / scale) (each product rounded to f32, as the
/// unscale stores it) summed in double, chunk by chunk and the chunks in
/// order (the same sum whatever the threads), for inputs [scale, grads...];
/// `found` says whether any gradient element is inf or NaN.
double unscaledSquares(KernelContext &c, bool &found) {
  float inverse = 1.0f / scalarF32(c.in[0]);
  double total = 0;
  found = false;
  for (size_t i = 1; i < c.in.size(); ++i) {
    const TensorRef &grad = c.in[i];
    int64_t size = grad.size(), chunks = (size + kChunk - 1) / kChunk;
    std::vector<double> partial(chunks);
    float poison = 0.0f;
#pragma omp parallel for reduction(+ : poison) if (size > kParallelGrain)
    for (int64_t ch = 0; ch < chunks; ++ch) {
      int64_t at = ch * kChunk, count = std::min(kChunk, size - at);
      float local[kChunk];
      const float *g = grad.dtype == DType::F32 ? grad.as<float>() + at : local;
      if (grad.dtype != DType::F32)
        readF32(grad, at, count, local);
      partial[ch] = squaresOf(g, count, inverse, poison);
    }
    for (double p : partial)
      total += p;
    found |= poison != poison;
  }
  return total;
}

void gradNorm(KernelContext &c) {
  bool found;
  setScalar(c.out[0], float(std::sqrt(unscaledSquares(c, found))));
}

/// check_finite and grad_norm in one pass: -> norm, found_inf.
void checkFiniteNorm(KernelContext &c) {
  bool found;
  setScalar(c.out[0], float(std::sqrt(unscaledSquares(c, found))));
  c.out[1].as<uint8_t>()[0] = found;
}

/// scale / min(1, max_norm / (norm + 1e-6)), each operation in f32 as
/// PyTorch's clip_grad_norm_ computes its factor.
void clipScale(KernelContext &c) {
  float factor = narrow(attrF64(c, "max_norm", 1.0)) / (scalarF32(c.in[0]) + 1e-6f);
  factor = factor < 1.0f || factor != factor ? factor : 1.0f;
  setScalar(c.out[0], scalarF32(c.in[1]) / factor);
}

void updateLossScaling(KernelContext &c) {
  const TensorRef &scale = c.in[1], &good = c.in[2], &bad = c.in[3];
  num::LossScaleRule rule{attrInt(c, "incr_every_n_steps", 2000),
                          attrInt(c, "decr_every_n_nan_or_inf", 1),
                          attrF64(c, "incr_ratio", 2.0), attrF64(c, "decr_ratio", 0.5),
                          attrBool(c, "dynamic", true)};
  num::LossScaleState state{scalarF32(scale), scalarF32(good), scalarF32(bad)};
  num::updateLossScale(flag(c.in[0]), state, rule);
  setScalar(scale, state.scale);
  setScalar(good, state.good);
  setScalar(bad, state.bad);
}

void fp8ScaleUpdate(KernelContext &c) {
  const TensorRef &history = c.in[0], &scale = c.in[1], &scaleInv = c.in[2], &amax = c.in[3];
  num::DelayedScalingRule rule = num::delayedScalingRule(
      attrF64(c, "fp8_max", 448.0), attrInt(c, "margin", 0),
      attrStr(c, "amax_compute", "max") == "most_recent");
  num::updateDelayedScaling(history.as<float>(), history.size(), *amax.as<float>(),
                            *scale.as<float>(), *scaleInv.as<float>(), rule);
}

/// True when any element of `t` is inf or nan, tested on the bits (no
/// conversion, so the loop vectorises).
template <typename Bits>
bool anyNonFinite(const Bits *v, int64_t n, Bits exponent) {
  Bits seen = 0;
#pragma omp parallel for reduction(| : seen) if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    seen |= num::nonFiniteBits(v[i], exponent);
  return seen != 0;
}

void checkFinite(KernelContext &c) {
  bool found = false;
  for (const TensorRef &g : c.in) {
    if (found)
      break;
    switch (g.dtype) {
    case DType::F32:
      found = anyNonFinite(g.as<uint32_t>(), g.size(), num::kF32Exponent);
      break;
    case DType::F16:
      found = anyNonFinite(g.as<uint16_t>(), g.size(), num::kF16Exponent);
      break;
    case DType::BF16:
      found = anyNonFinite(g.as<uint16_t>(), g.size(), num::kBf16Exponent);
      break;
    default: {
      F32In v(g);
      for (int64_t i = 0; i < g.size() && !found; ++i)
        found = !std::isfinite(v[i]);
    }
    }
  }
  c.out[0].as<uint8_t>()[0] = found;
}

/// Calls `visit(param, grad, at, count)` for each chunk of the update's
/// param, in parallel, with f32 views of the chunk: the param (its own
/// values where it is f32, else widened into a local buffer) and its
/// gradient as the update sees it (with a grad_scale (UpdateOperands)
/// multiplied by 1 / grad_scale, as check_finite_and_unscale does). Without
/// `withGradient` the gradient is not read, and `grad` is the param's view
/// again, for a visit that does not use it.
template <typename F>
void forEachUpdateChunk(KernelContext &c, F visit, bool withGradient = true) {
  using U = UpdateOperands;
  U u = updateOperandsOf(c.step, c.attrs);
  const TensorRef &p = c.in[U::param], &grad = c.in[U::grad];
  bool scaled = u.gradScale >= 0;
  float inverse = scaled ? 1.0f / scalarF32(c.in[u.gradScale]) : 1.0f;
  int64_t n = p.size(), chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t ch = 0; ch < chunks; ++ch) {
    int64_t at = ch * kChunk, count = std::min(kChunk, n - at);
    float pLocal[kChunk], gLocal[kChunk];
    float *param = p.dtype == DType::F32 ? p.as<float>() + at : pLocal;
    const float *g = grad.dtype == DType::F32 && !scaled ? grad.as<float>() + at : gLocal;
    if (p.dtype != DType::F32)
      readF32(p, at, count, pLocal);
    if (!withGradient)
      g = param;
    else if (g == gLocal) {
      readF32(grad, at, count, gLocal);
      if (scaled)
        for (int64_t k = 0; k < count; ++k)
          gLocal[k] *= inverse;
    }
    visit(param, g, at, count);
  }
}

/// Runs `update(param, grad, index)` over f32 views of param and grad
/// (forEachUpdateChunk), unless found_inf; a low-precision param is rounded
/// back, and with a copy the param's low-precision copy is rewritten from
/// the updated values in the same pass. Without `withGradient` the gradient
/// is not read, and `update` must not use the value it gets for it.
template <typename F> void updateParam(KernelContext &c, F update, bool withGradient = true) {
  using U = UpdateOperands;
  if (flag(c.in[U::foundInf]))
    return;
  int copyAt = updateOperandsOf(c.step, c.attrs).copy;
  const TensorRef &p = c.in[U::param];
  const TensorRef *copy = copyAt >= 0 ? &c.in[copyAt] : nullptr;
  auto visit = [&](float *param, const float *g, int64_t at, int64_t count) {
    for (int64_t k = 0; k < count; ++k)
      update(param[k], g[k], at + k);
    if (p.dtype != DType::F32)
      writeF32(param, p, at, count);
    if (copy)
      writeF32(param, *copy, at, count);
  };
  forEachUpdateChunk(c, visit, withGradient);
}

void sgd(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::SgdUpdate update{scalarF32(c.in[2]), narrow(cfg.weightDecay)};
  updateParam(c, [&](float &p, float g, int64_t) { update(p, g); });
}

void momentum(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::MomentumUpdate update{scalarF32(c.in[2]), narrow(cfg.momentum), narrow(cfg.weightDecay),
                             cfg.nesterov};
  float *v = c.in[4].as<float>();
  updateParam(c, [&](float &p, float g, int64_t i) { update(p, g, v[i]); });
}

void adam(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::AdamUpdate update =
      num::AdamUpdate::at(scalarF32(c.in[2]), cfg.beta1, cfg.beta2, cfg.epsilon,
                          cfg.weightDecay, scalarF32(c.in[6]), cfg.decoupled);
  float *m = c.in[4].as<float>(), *v = c.in[5].as<float>();
  updateParam(c, [&](float &p, float g, int64_t i) { update(p, g, m[i], v[i]); });
}

void lion(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::LionUpdate update{scalarF32(c.in[2]), cfg.beta1, cfg.beta2, cfg.weightDecay};
  float *m = c.in[4].as<float>();
  updateParam(c, [&](float &p, float g, int64_t i) { update(p, g, m[i]); });
}

void rmsprop(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  UpdateOperands u = updateOperandsOf(c.step, c.attrs);
  num::RmspropUpdate update{scalarF32(c.in[UpdateOperands::lr]), narrow(cfg.weightDecay),
                            cfg.alpha, cfg.epsilon, cfg.momentum, cfg.centered};
  float *v = c.in[UpdateOperands::firstMoment].as<float>();
  float *buffer = u.momentumBuffer >= 0 ? c.in[u.momentumBuffer].as<float>() : nullptr;
  float *average = u.gradAverage >= 0 ? c.in[u.gradAverage].as<float>() : nullptr;
  // One loop for each set of states, `centered` a constant in each, so
  // that each vectorises.
  auto run = [&](auto withBuffer, auto withAverage) {
    updateParam(c, [&](float &p, float g, int64_t i) {
      num::RmspropUpdate fixed = update;
      fixed.centered = withAverage;
      float none = 0, alsoNone = 0;
      fixed(p, g, v[i], withBuffer ? buffer[i] : none, withAverage ? average[i] : alsoNone);
    });
  };
  using Yes = std::true_type;
  using No = std::false_type;
  if (buffer)
    average ? run(Yes{}, Yes{}) : run(Yes{}, No{});
  else
    average ? run(No{}, Yes{}) : run(No{}, No{});
}

void adagrad(KernelContext &c) {
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::AdagradUpdate update{scalarF32(c.in[UpdateOperands::lr]), narrow(cfg.weightDecay),
                            cfg.epsilon};
  float *sum = c.in[UpdateOperands::firstMoment].as<float>();
  updateParam(c, [&](float &p, float g, int64_t i) { update(p, g, sum[i]); });
}

/// Two passes (num::LambUpdate): the moments and each chunk's sums of p^2
/// and u^2 in f64, added in chunk order (the same sums whatever the
/// threads); then the step, scaled by the tensor's trust ratio.
void lamb(KernelContext &c) {
  using U = UpdateOperands;
  if (flag(c.in[U::foundInf]))
    return;
  UpdateConfig cfg = updateConfigOf(c.step, c.attrs);
  num::LambUpdate update =
      num::LambUpdate::at(scalarF32(c.in[U::lr]), cfg.beta1, cfg.beta2, cfg.epsilon,
                          cfg.weightDecay, scalarF32(c.in[6]), cfg.adapt);
  float *m = c.in[4].as<float>(), *v = c.in[5].as<float>();
  int64_t chunks = (c.in[U::param].size() + kChunk - 1) / kChunk;
  std::vector<double> paramSquares(chunks), directionSquares(chunks);
  forEachUpdateChunk(c, [&](float *param, const float *g, int64_t at, int64_t count) {
    double pp = 0, uu = 0;
    for (int64_t k = 0; k < count; ++k) {
      float u = update.moments(param[k], g[k], m[at + k], v[at + k]);
      pp += double(param[k]) * param[k];
      uu += double(u) * u;
    }
    paramSquares[at / kChunk] = pp;
    directionSquares[at / kChunk] = uu;
  });
  double pp = 0, uu = 0;
  for (int64_t ch = 0; ch < chunks; ++ch)
    pp += paramSquares[ch], uu += directionSquares[ch];
  double ratio = update.trustRatio(pp, uu);
  updateParam(
      c, [&](float &p, float, int64_t i) { update.apply(p, m[i], v[i], ratio); },
      /*withGradient=*/false); // the moments hold what the step needs
}

/// step += 1 unless found_inf; without found_inf, always.
void countStep(KernelContext &c) {
  if (c.in.size() < 2 || !flag(c.in[1]))
    setScalar(c.in[0], scalarF32(c.in[0]) + 1.0f);
}

/// average := lerp(average, value, 1 - d) unless found_inf (num::EmaUpdate).
void ema(KernelContext &c) {
  if (flag(c.in[2]))
    return;
  num::EmaUpdate update = num::EmaUpdate::at(c.attrs.getF64("decay", 0.0), c.in.size() > 3,
                                             c.in.size() > 3 ? scalarF32(c.in[3]) : 0.0);
  float *average = c.in[0].as<float>();
  F32In value(c.in[1]);
  int64_t n = c.in[0].size();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    update(average[i], value[i]);
}

/// record_step (runtime/core/History.h): the step's row, then count += 1.
void recordStep(KernelContext &c) {
  const TensorRef &history = c.in[0];
  int64_t &count = *c.in[1].as<int64_t>();
  double *row = history.as<double>() + (count % history.shape[0]) * kHistoryFields;
  row[kStepLoss] = scalarF32(c.in[3]);
  row[kStepLr] = scalarF32(c.in[4]);
  HistoryOperands h = historyOperandsOf(c.step, c.attrs);
  row[kStepLossScale] = h.lossScale >= 0 ? scalarF32(c.in[h.lossScale]) : NAN;
  row[kStepSkipped] = flag(c.in[2]) ? 1.0 : 0.0;
  row[kStepGradNorm] = h.gradNorm >= 0 ? scalarF32(c.in[h.gradNorm]) : NAN;
  ++count;
}

void lrSchedule(KernelContext &c) {
  double lr = lrScheduleOf(c.step, c.attrs)
                  .at(scalarF32(c.in[0]), scalarF32(c.in[1]), scalarF32(c.in[2]));
  setScalar(c.out[0], narrow(lr));
}

void assign(KernelContext &c) {
  const TensorRef &target = c.in[0], &value = c.in[1];
  if (target.dtype == value.dtype) {
    copyBytes(value, target);
    return;
  }
  F32In v(value);
  fromF32(v.data(), target.data, target.dtype, target.size());
}

void restoreIfSkipped(KernelContext &c) {
  if (flag(c.in[2]))
    copyBytes(c.in[1], c.in[0]);
}

void accumulate(KernelContext &c) {
  const TensorRef &acc = c.in[0];
  std::vector<float> sum(acc.size());
  toF32(acc.data, acc.dtype, sum.data(), sum.size());
  F32In g(c.in[1]);
  for (int64_t i = 0; i < acc.size(); ++i)
    sum[i] += g[i];
  fromF32(sum.data(), acc.data, acc.dtype, sum.size());
}

/// counter += 1, or += flag: the plan's counters (i64 scalars).
void increment(KernelContext &c) {
  *c.in[0].as<int64_t>() += c.in.size() > 1 ? (int64_t)flag(c.in[1]) : 1;
}

} // namespace

void addTrainingKernels(KernelTable &t) {
  t[Kernel::CheckFiniteAndUnscale] = checkFiniteAndUnscale;
  t[Kernel::CheckFinite] = checkFinite;
  t[Kernel::UpdateLossScaling] = updateLossScaling;
  t[Kernel::Fp8ScaleUpdate] = fp8ScaleUpdate;
  t[Kernel::Sgd] = sgd;
  t[Kernel::Momentum] = momentum;
  t[Kernel::Adam] = adam;
  t[Kernel::Lamb] = lamb;
  t[Kernel::Lion] = lion;
  t[Kernel::Rmsprop] = rmsprop;
  t[Kernel::Adagrad] = adagrad;
  t[Kernel::CountStep] = countStep;
  t[Kernel::Ema] = ema;
  t[Kernel::LrSchedule] = lrSchedule;
  t[Kernel::GradNorm] = gradNorm;
  t[Kernel::CheckFiniteNorm] = checkFiniteNorm;
  t[Kernel::ClipScale] = clipScale;
  t[Kernel::RecordStep] = recordStep;
  t[Kernel::Assign] = assign;
  t[Kernel::Accumulate] = accumulate;
  t[Kernel::RestoreIfSkipped] = restoreIfSkipped;
  t[Kernel::Increment] = increment;
}

} // namespace ampc::rt
