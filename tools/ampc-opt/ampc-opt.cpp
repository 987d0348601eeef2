// ampc-opt: the MlirOptMain driver over the graph dialect and ampc's passes,
// for lit tests and for trying passes by hand.
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "ops/GraphDialect.h"
#include "ops/GraphOps.h"
#include "passes/Passes.h"

int main(int argc, char **argv) {
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  ampc::registerAmpcPasses();
  mlir::DialectRegistry registry;
  registry.insert<ampc::graph::GraphDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ampc optimizer driver\n", registry));
}
