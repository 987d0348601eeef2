// The runtime's embedding API in one include, without MLIR: load a plan,
// run it on a device, feed inputs and read outputs from host memory, train,
// and save and load checkpoints. Installed as <ampc/Runtime.h>; link
// `ampc::runtime` (docs/runtime.md, "Embedding the runtime").
#ifndef AMPC_RUNTIME_RUNTIME_H
#define AMPC_RUNTIME_RUNTIME_H

#include "runtime/core/Plan.h"
#include "runtime/core/Version.h"
#include "runtime/cpu/CpuEnvironment.h"
#include "runtime/device/Executor.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Metrics.h"
#include "runtime/driver/Runner.h"
#include "runtime/driver/Trainer.h"
#include "runtime/driver/Weights.h"

#endif
