// The `graph` dialect (see ops/GraphBase.td).
#ifndef AMPC_OPS_GRAPHDIALECT_H
#define AMPC_OPS_GRAPHDIALECT_H

#include "mlir/IR/Dialect.h"

#include "ops/GraphDialect.h.inc"

#endif
