// The metrics file of a run or a training run (`--metrics-json`), written by
// `ampc run`, `ampc train` and `ampc-plan-run` alike (docs/cli.md).
#ifndef AMPC_RUNTIME_DRIVER_METRICS_H
#define AMPC_RUNTIME_DRIVER_METRICS_H

#include "runtime/driver/Runner.h"
#include "runtime/driver/Trainer.h"

namespace ampc::rt {

Json runMetrics(const Plan &plan, const RunOptions &options, const RunResult &result);
/// With TrainOptions::profile, `profile` is added: per kernel the ms per
/// step, the kernels' and the whole run's ms per step, the share of AMP
/// bookkeeping (casts, finite checks, the scale update) in the kernels' time,
/// every launch's ms per step by its first step's name, the GEMMs' ms per
/// step and achieved TFLOP/s, and the slowest launches
/// with their bytes, GB/s and (GEMMs, convolutions) TFLOP/s.
Json trainMetrics(const Plan &plan, const TrainOptions &options, const TrainResult &result);
Json profileMetrics(const Plan &plan, const Profile &profile);

} // namespace ampc::rt

#endif
