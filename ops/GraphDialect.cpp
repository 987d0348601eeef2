#include "ops/GraphDialect.h"
#include "ops/GraphOps.h"

using namespace mlir;
using namespace ampc::graph;

#include "ops/GraphDialect.cpp.inc"
#include "ops/AmpInterface.cpp.inc"
#include "ops/NodeTypeInference.cpp.inc"
#include "ops/GradientInterface.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "ops/GraphOps.cpp.inc"
      >();
}
