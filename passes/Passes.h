// The passes of ampc (declared in passes/Passes.td).
#ifndef AMPC_PASSES_PASSES_H
#define AMPC_PASSES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "ops/GraphOps.h"

namespace ampc {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace ampc

#endif
