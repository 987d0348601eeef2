// The training history (docs/training.md, "Curves"): a training plan
// records every optimizer step on the device, in a ring of kHistoryRows
// rows that the driver reads back at its progress reports, so a captured
// step needs no host work and the host no sync per step.
//  - record_step(history, count, found_inf, loss, lr, [loss_scale],
//    [grad_norm]): row count % kHistoryRows of the f64 [kHistoryRows,
//    kHistoryFields] state `history` gets the step's fields, then the i64
//    state `count` (this run's optimizer steps) grows by one. Its attribute
//    `fields` names the optional inputs it has, in order
//    (StepVariants.h, HistoryOperands).
#ifndef AMPC_RUNTIME_CORE_HISTORY_H
#define AMPC_RUNTIME_CORE_HISTORY_H

#include <cstdint>

namespace ampc::rt {

constexpr const char *kHistory = "history";
constexpr const char *kHistoryCount = "history.count";

/// Rows in the ring: the driver reads it at least every half of them.
constexpr int64_t kHistoryRows = 256;

/// record_step's optional inputs, by the names its `fields` spells them.
constexpr const char *kFieldLossScale = "loss_scale";
constexpr const char *kFieldGradNorm = "grad_norm";

/// The fields of a row. A field the plan has no value for is NaN (the loss
/// scale without loss scaling).
enum HistoryField : int {
  kStepLoss,      // the loss of the step's (last) micro-batch
  kStepLr,        // the learning rate its updates read
  kStepLossScale, // the loss scale after the step's update
  kStepSkipped,   // 1 where a non-finite gradient skipped the step
  kStepGradNorm,  // the unscaled gradients' global norm, where the plan clips
  kHistoryFields
};

} // namespace ampc::rt

#endif
