// Softmax scales: a scale before a softmax runs inside it, and a scale after
// a softmax's backward inside that (docs/performance.md, "Fusions").
#ifndef AMPC_COMPILER_SOFTMAXSCALEFUSION_H
#define AMPC_COMPILER_SOFTMAXSCALEFUSION_H

#include "runtime/core/Plan.h"

namespace ampc {

/// Folds `scale` steps into the softmaxes that alone read their results and
/// into the softmax_backward whose result alone they read, on a plan's
/// steps, before its memory is planned.
void fuseSoftmaxScales(rt::Plan &plan);

} // namespace ampc

#endif
