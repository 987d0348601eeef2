// --lr-schedule and the flags of its shape (docs/training.md,
// "Learning-rate schedules" and "Reducing the rate on a plateau").
#ifndef AMPC_TOOLS_AMPC_SCHEDULEFLAGS_H
#define AMPC_TOOLS_AMPC_SCHEDULEFLAGS_H

#include <optional>

#include "compiler/Pipelines.h"
#include "runtime/driver/LrPlateau.h"
#include "tools/ampc/Args.h"

namespace ampc::cli {

/// The schedule that the host runs on the evaluations, not the step.
inline constexpr const char *kPlateauSchedule = "reduce_lr_on_plateau";

/// The step's schedule into `s` (reduce_lr_on_plateau: constant), each
/// flag refused where the schedule has no use for it.
void readLrSchedule(const Args &args, TrainSettings &s);

/// reduce_lr_on_plateau's settings, where it is the schedule.
std::optional<rt::PlateauSettings> plateauFrom(const Args &args);

} // namespace ampc::cli

#endif
