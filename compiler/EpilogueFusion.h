// GEMM epilogues: a matmul, its bias add and a relu or tanh GELU after it
// become one `matmul_bias` step (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_EPILOGUEFUSION_H
#define AMPC_COMPILER_EPILOGUEFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds bias adds (and the relu or tanh GELU after them) into the matmuls
/// they follow, on a plan's steps, before its memory is planned.
void fuseGemmEpilogues(rt::Plan &plan);

} // namespace ampc

#endif
