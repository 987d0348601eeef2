// --lr-schedule's flags: the step's schedules (runtime/numerics/LrSchedule.h)
// and reduce_lr_on_plateau, which the training loop runs on the
// evaluations (runtime/driver/LrPlateau.h).
#include "tools/ampc/ScheduleFlags.h"

#include <string>

#include "runtime/numerics/LrSchedule.h"
#include "tools/ampc/Commands.h"

namespace ampc::cli {

namespace {

/// Hugging Face's scheduler names that are an ampc schedule with a flag.
const char *scheduleHint(const std::string &name) {
  if (name == "constant_with_warmup")
    return ": it is constant with --warmup-steps W";
  if (name == "cosine_with_min_lr")
    return ": it is cosine with --min-lr M";
  if (name == "exponential")
    return ": ExponentialLR is step with --lr-step-every 1 --lr-gamma G";
  return "";
}

} // namespace

/// --lr-schedule and the flags of its shape, each refused where the
/// schedule has no use for it (docs/training.md, "Learning-rate schedules").
void readLrSchedule(const Args &args, TrainSettings &s) {
  s.lrSchedule = args.get("lr-schedule").value_or("constant");
  bool plateau = s.lrSchedule == kPlateauSchedule;
  num::ScheduleKind kind = num::ScheduleKind::Constant;
  if (plateau)
    s.lrSchedule = "constant"; // the step's rate is the lr input the host cuts
  else if (!num::scheduleKindOf(s.lrSchedule.c_str(), kind))
    throw UsageError(std::string("--lr-schedule must be ") + num::kScheduleList + " (in the " +
                     "step), or " + kPlateauSchedule + " (on the evaluations), got '" +
                     s.lrSchedule + "'" + scheduleHint(s.lrSchedule));
  using K = num::ScheduleKind;
  bool warms = !plateau && kind != K::OneCycle && kind != K::Step;
  bool decays = plateau || (warms && kind != K::Constant && kind != K::InverseSqrt);
  for (const char *flag :
       {"plateau-factor", "plateau-patience", "plateau-threshold", "plateau-cooldown"})
    if (args.has(flag) && !plateau)
      throw UsageError(std::string("--") + flag + " is for --lr-schedule " + kPlateauSchedule);
  struct FlagUse {
    const char *flag;
    bool used;
    const char *schedules; // where it is read
  };
  const FlagUse uses[] = {
      {"warmup-steps", warms, "every --lr-schedule but onecycle, step and reduce_lr_on_plateau"},
      {"min-lr", decays,
       "--lr-schedule cosine, linear, polynomial, cosine_with_restarts, warmup_stable_decay or "
       "reduce_lr_on_plateau"},
      {"lr-step-every", kind == K::Step, "--lr-schedule step"},
      {"lr-gamma", kind == K::Step, "--lr-schedule step"},
      {"lr-power", kind == K::Polynomial, "--lr-schedule polynomial"},
      {"lr-cycles", kind == K::CosineWithRestarts, "--lr-schedule cosine_with_restarts"},
      {"lr-decay-steps", kind == K::WarmupStableDecay, "--lr-schedule warmup_stable_decay"}};
  for (const FlagUse &use : uses)
    if (args.has(use.flag) && !use.used)
      throw UsageError(std::string("--") + use.flag + " is for " + use.schedules);
  if (kind == K::WarmupStableDecay && !args.has("lr-decay-steps"))
    throw UsageError("--lr-schedule warmup_stable_decay decays over the last D steps: give "
                     "--lr-decay-steps D (a tenth to a fifth of the run is usual)");
  s.warmupSteps = args.getInt("warmup-steps", 0, 0);
  s.minLr = args.getNumber("min-lr", 0.0, 0, 1e6);
  s.lrStepEvery = args.getInt("lr-step-every", 1, 1);
  s.lrGamma = args.getNumber("lr-gamma", 0.1, 1e-12, 1e6);
  s.lrPower = args.getNumber("lr-power", 1.0, 1e-6, 1e3);
  s.lrCycles = args.getInt("lr-cycles", 1, 1);
  s.lrDecaySteps = args.getInt("lr-decay-steps", 0, 1);
}

std::optional<rt::PlateauSettings> plateauFrom(const Args &args) {
  if (args.get("lr-schedule").value_or("") != kPlateauSchedule)
    return std::nullopt;
  rt::PlateauSettings p;
  p.factor = args.getNumber("plateau-factor", p.factor, 1e-6, 1);
  if (p.factor == 1)
    throw UsageError("--plateau-factor multiplies the rate on a plateau: it must be below 1 "
                     "(0.1 and 0.5 are usual)");
  p.patience = args.getInt("plateau-patience", p.patience, 0);
  p.threshold = args.getNumber("plateau-threshold", p.threshold, 0, 0.999);
  p.cooldown = args.getInt("plateau-cooldown", p.cooldown, 0);
  p.minLr = args.getNumber("min-lr", p.minLr, 0, 1e6);
  return p;
}

} // namespace ampc::cli
