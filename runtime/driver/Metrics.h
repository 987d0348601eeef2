// The metrics file of a run or a training run (`--metrics-json`), written by
// `ampc run`, `ampc train` and `ampc-plan-run` alike (docs/cli.md).
#ifndef AMPC_RUNTIME_DRIVER_METRICS_H
#define AMPC_RUNTIME_DRIVER_METRICS_H

#include "runtime/driver/Runner.h"
#include "runtime/driver/Trainer.h"

namespace ampc::rt {

Json runMetrics(const Plan &plan, const RunOptions &options, const RunResult &result);
Json trainMetrics(const Plan &plan, const TrainOptions &options, const TrainResult &result);

} // namespace ampc::rt

#endif
