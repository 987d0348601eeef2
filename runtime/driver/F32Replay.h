// One step of a plan run alone on the CPU reference with every f16/bf16
// operand widened to f32 and its results kept in f32: what the op would
// have computed in f32 from the same inputs. --check-numerics uses it to
// tell an overflow that low precision caused from one that f32 has too
// (docs/precision-doctor.md).
#ifndef AMPC_RUNTIME_DRIVER_F32REPLAY_H
#define AMPC_RUNTIME_DRIVER_F32REPLAY_H

#include <cstddef>
#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::rt {

/// A step's input as its kernel reads it: the bytes in `dtype`, which is
/// the buffer's dtype or, where the step rounds the input (`round_inputs`),
/// the dtype it rounds to.
struct StepInput {
  DType dtype = DType::F32;
  std::vector<std::byte> bytes;
};

/// Runs `step` of `plan` on the CPU with `inputs` (one per step input)
/// widened to f32 where they are f16 or bf16, and returns each of its
/// outputs as f32 values. A cast returns its input widened. Throws
/// PlanError or RuntimeError if the kernel does not take f32 there.
std::vector<std::vector<float>> replayInF32(const Plan &plan, const Step &step,
                                               const std::vector<StepInput> &inputs,
                                               bool training, uint64_t seed);

} // namespace ampc::rt

#endif
