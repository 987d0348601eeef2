// The learning rate of optimizer step s (from 0) of S under a schedule
// (docs/training.md, "Learning-rate schedules"), computed in double as
// PyTorch's and Hugging Face's schedulers compute it in Python, then used as
// an f32 scalar. The CPU and CUDA `lr_schedule` kernels call it. Host and
// device code.
#ifndef AMPC_RUNTIME_NUMERICS_LRSCHEDULE_H
#define AMPC_RUNTIME_NUMERICS_LRSCHEDULE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

enum class ScheduleKind : uint8_t {
  Constant,
  Cosine,
  Linear,
  OneCycle,
  Step,
  Polynomial,
  CosineWithRestarts,
  InverseSqrt,
  WarmupStableDecay
};

/// The schedules by name: --lr-schedule and the lr_schedule op's `kind`.
struct ScheduleName {
  const char *name;
  ScheduleKind kind;
};
inline constexpr ScheduleName kScheduleNames[] = {
    {"constant", ScheduleKind::Constant},
    {"cosine", ScheduleKind::Cosine},
    {"linear", ScheduleKind::Linear},
    {"onecycle", ScheduleKind::OneCycle},
    {"step", ScheduleKind::Step},
    {"polynomial", ScheduleKind::Polynomial},
    {"cosine_with_restarts", ScheduleKind::CosineWithRestarts},
    {"inverse_sqrt", ScheduleKind::InverseSqrt},
    {"warmup_stable_decay", ScheduleKind::WarmupStableDecay}};
/// The names as an error lists them.
inline constexpr const char *kScheduleList =
    "constant, cosine, linear, onecycle, step, polynomial, cosine_with_restarts, inverse_sqrt "
    "or warmup_stable_decay";

/// The schedule named `name`, or false.
inline bool scheduleKindOf(const char *name, ScheduleKind &kind) {
  for (const ScheduleName &s : kScheduleNames)
    if (strcmp(name, s.name) == 0) {
      kind = s.kind;
      return true;
    }
  return false;
}

struct LrSchedule {
  ScheduleKind kind = ScheduleKind::Constant;
  double warmup = 0, minLr = 0, stepEvery = 1, gamma = 0.1;
  double power = 1, cycles = 1, decaySteps = 0;

  /// PyTorch's OneCycleLR defaults: pct_start, div_factor, final_div_factor.
  static constexpr double kPctStart = 0.3, kDivFactor = 25.0, kFinalDivFactor = 1e4;
  /// inverse_sqrt's timescale without a warmup (Hugging Face's).
  static constexpr double kInverseSqrtTimescale = 1e4;

  /// start + (end - start) * (1 + cos(pi * pct)) / 2 as PyTorch writes it.
  AMPC_HD static double cosineAnneal(double start, double end, double pct) {
    return end + (start - end) / 2.0 * (cos(3.141592653589793 * pct) + 1.0);
  }

  /// The rate at step `s` of `total` for the peak `lr`. Past the end the
  /// decaying schedules stay at their last value.
  AMPC_HD double at(double lr, double s, double total) const {
    switch (kind) {
    case ScheduleKind::Step: return lr * pow(gamma, floor(s / stepEvery));
    case ScheduleKind::OneCycle: return oneCycle(lr, s < total ? s : total, total);
    default: break;
    }
    if (s < warmup)
      return lr * (s + 1.0) / warmup;
    switch (kind) {
    case ScheduleKind::Constant: return lr;
    case ScheduleKind::InverseSqrt: {
      double t = warmup > 0 ? warmup : kInverseSqrtTimescale;
      return lr * sqrt(t / (s - warmup + t));
    }
    case ScheduleKind::WarmupStableDecay: {
      double start = total - decaySteps > warmup ? total - decaySteps : warmup;
      return s < start ? lr : cosineAnneal(lr, minLr, progress(s, start, total));
    }
    default: break;
    }
    double pct = progress(s, warmup, total);
    switch (kind) {
    case ScheduleKind::Linear: return lr + (minLr - lr) * pct;
    case ScheduleKind::Polynomial: return minLr + (lr - minLr) * pow(1.0 - pct, power);
    case ScheduleKind::CosineWithRestarts:
      return pct < 1.0 ? cosineAnneal(lr, minLr, fmod(cycles * pct, 1.0)) : minLr;
    default: return cosineAnneal(lr, minLr, pct);
    }
  }

  /// How far step s is from `from` to `total`, in [0, 1].
  AMPC_HD static double progress(double s, double from, double total) {
    double pct = total > from ? (s - from) / (total - from) : 1.0;
    return pct < 1.0 ? pct : 1.0;
  }

  /// OneCycleLR(max_lr = lr, total_steps = total), two phases, cosine
  /// annealing, as torch/optim/lr_scheduler.py computes get_lr().
  AMPC_HD static double oneCycle(double lr, double s, double total) {
    double initial = lr / kDivFactor, last = initial / kFinalDivFactor;
    double end1 = kPctStart * total - 1.0, end2 = total - 1.0;
    if (s <= end1 && end1 > 0) // a run of under 4 steps has no warmup phase
      return cosineAnneal(initial, lr, s / end1);
    return cosineAnneal(lr, last, (s - end1) / (end2 - end1));
  }
};

} // namespace ampc::num

#endif
