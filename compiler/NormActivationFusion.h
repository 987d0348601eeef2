// Batch norm activations: a batch norm, the residual add and the relu after
// it become one step, and the relu's backward joins the norm's backward
// (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_NORMACTIVATIONFUSION_H
#define AMPC_COMPILER_NORMACTIVATIONFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds relus (and residual adds before them) into the batch norms they
/// follow, and the relus' backward into the norms' backward, on a plan's
/// steps, before its memory is planned and its elementwise chains form.
void fuseNormActivations(rt::Plan &plan);

} // namespace ampc

#endif
