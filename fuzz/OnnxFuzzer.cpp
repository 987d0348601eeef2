// Fuzz target: an ONNX model through the importer, then the imported graph
// through the AMP pipeline, lowering and the ONNX exporter.
#include "compiler/Diagnostics.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/onnx/OnnxExport.h"
#include "compiler/onnx/OnnxImport.h"
#include "fuzz/FuzzUtil.h"
#include "mlir/IR/MLIRContext.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext ctx;
  try {
    ampc::OnnxImportOptions options;
    options.batch = 2;
    options.fuseAttention = size % 2; // half the inputs through the attention matcher
    auto module = ampc::importOnnx(ctx, ampc::fuzz::text(data, size), "fuzz", options);
    try {
      ampc::exportOnnx(*module);
    } catch (const ampc::GraphError &) { // fused attention has no ONNX form; go on
    }
    ampc::runAmpPipeline(*module, ampc::AmpSettings{});
    ampc::rt::planToJson(ampc::lowerToPlan(*module));
  } catch (const ampc::GraphError &) {
  } catch (const ampc::rt::PlanError &) {
  }
  return 0;
}
