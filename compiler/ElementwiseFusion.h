// Elementwise chains: elementwise ops whose intermediate values nothing else
// reads become one `elementwise_chain` step (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_ELEMENTWISEFUSION_H
#define AMPC_COMPILER_ELEMENTWISEFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds each elementwise step into the elementwise step that alone reads
/// its result, on a plan's steps, before its memory is planned.
void fuseElementwiseChains(rt::Plan &plan);

} // namespace ampc

#endif
