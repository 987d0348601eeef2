// GEMM epilogues: a matmul, its bias add and a relu or tanh GELU after it
// become one `matmul_bias` step; in the backward, a GEMM with the
// activation's derivative and the bias gradient after it, and a weight
// gradient with the bias gradient beside it (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_EPILOGUEFUSION_H
#define AMPC_COMPILER_EPILOGUEFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds bias adds (and the relu or tanh GELU after them) into the matmuls
/// they follow, on a plan's steps, before its memory is planned.
void fuseGemmEpilogues(rt::Plan &plan);

/// Folds activation gradients and bias gradients into the GEMMs next to
/// them (`matmul_act_grad`, `matmul_bias_grad`), after fuseGemmEpilogues.
void fuseGradEpilogues(rt::Plan &plan);

} // namespace ampc

#endif
