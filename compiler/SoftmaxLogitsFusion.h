// Softmax backward from logits: the backward recomputes the softmax's
// probabilities from its operand instead of reading them from memory
// (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_SOFTMAXLOGITSFUSION_H
#define AMPC_COMPILER_SOFTMAXLOGITSFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Makes each softmax_backward whose probabilities only it reads take the
/// softmax's operand (`from_logits`); the softmax keeps only its rounded
/// copy, or goes. On a plan's steps, before its memory is planned.
void fuseSoftmaxLogits(rt::Plan &plan);

} // namespace ampc

#endif
