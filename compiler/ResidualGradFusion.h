// Residual gradients: the add that sums a layer norm's incoming gradient
// joins the norm's backward (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_RESIDUALGRADFUSION_H
#define AMPC_COMPILER_RESIDUALGRADFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds each add whose sum only a layer_norm_backward reads, as its dy,
/// into that step, on a plan's steps, before its memory is planned and its
/// elementwise chains form.
void fuseResidualGrads(rt::Plan &plan);

} // namespace ampc

#endif
