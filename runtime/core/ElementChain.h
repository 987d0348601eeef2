// The program of an `elementwise_chain` step (docs/runtime.md, "Elementwise
// chains") as the plan spells it, and its decoding into the num::Chain that
// the kernels evaluate. The lowering writes it (compiler/plan/ElementwiseChains.cpp);
// the signature check and both backends decode it, so no kernel sees a
// program that reads a slot it has not filled.
#ifndef AMPC_RUNTIME_CORE_ELEMENTCHAIN_H
#define AMPC_RUNTIME_CORE_ELEMENTCHAIN_H

#include <optional>
#include <string>
#include <vector>

#include "runtime/core/DType.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/numerics/ElementChain.h"

namespace ampc::rt {

/// One op of a chain as the plan spells it: attributes `ops` (names),
/// `args` (three value slots per op: operand k is slot k, op j's value
/// slot operands + j, -1 none), `rounds` (per op "", "f16" or "bf16": the
/// dtype its value is rounded to) and `params` (two numbers per op); and
/// `results`, the slot each output stores.
struct ChainOpSpec {
  std::string name; // "add", "tanh", "gelu_tanh", "pow", "backward:relu", ...
  int args[3] = {-1, -1, -1};
  std::string round;
  double p0 = 0, p1 = 0;
};

/// The chain op of a step of an elementwise kernel (add, tanh, gelu,
/// scale, unary_backward, ...; its attributes decoded), reading its
/// operands from `args`; nullopt for a kernel no chain can hold.
std::optional<ChainOpSpec> chainOpOf(const Step &step, const StepAttrs &attrs,
                                     std::vector<int> args);

/// The step attributes that spell `ops`, output k storing slot results[k]
/// (attribute `results`).
void writeChain(const std::vector<ChainOpSpec> &ops, const std::vector<int> &results,
                Json &attrs);

/// The chain of a step with `inputs` operands and `outputs` results; throws
/// PlanError (without the step's name) saying what is malformed.
num::Chain decodeChain(const StepAttrs &attrs, size_t inputs, size_t outputs);

} // namespace ampc::rt

#endif
