// Fuzz target: a saved graph, as JSON or as .mlir (AMPC_FUZZ_MLIR), through
// every reader and writer that takes one: import and verification, the JSON
// and MLIR writers, the report, the AMP pipeline, lowering and the plan writer;
// and, for a graph with a loss, the training pipeline with gradient
// checkpointing (autodiff, the segments' copies, loss scaling, one of the
// optimizers by the input's length, the weights' averages)
// and with the cross-entropy options (class weights for its classes); and
// LoRA on every linear layer, lowered.
#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/PrecisionReport.h"
#include "fuzz/FuzzUtil.h"
#include "mlir/IR/MLIRContext.h"
#include "ops/GraphOps.h"

#ifndef AMPC_FUZZ_NAME
#define AMPC_FUZZ_NAME "graph.json"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext ctx;
  try {
    auto module = ampc::parseGraph(ctx, ampc::fuzz::text(data, size), AMPC_FUZZ_NAME);
    ampc::exportGraphJson(*module);
    ampc::printGraph(*module, "graph.mlir");
    ampc::reportJson(ampc::makeReport(*module));
    mlir::OwningOpRef<mlir::ModuleOp> training = module->clone(), adapted = module->clone(),
                                      smoothed = module->clone();
    try {
      ampc::TrainSettings crossEntropy;
      crossEntropy.labelSmoothing = 0.1;
      crossEntropy.weighting.ignoreIndex = -100;
      smoothed->walk([&](ampc::graph::SoftmaxCrossEntropyOp op) {
        auto logits = mlir::dyn_cast<mlir::RankedTensorType>(op.getLogits().getType());
        int64_t classes = logits && logits.getRank() ? logits.getShape().back() : 0;
        for (int64_t k = 0; k < classes && k < 4096; ++k)
          crossEntropy.weighting.classWeights.push_back(0.5 + k % 3);
        return mlir::WalkResult::interrupt();
      });
      ampc::runTrainingPipeline(*smoothed, ampc::AmpSettings{}, crossEntropy);
      ampc::rt::planToJson(ampc::lowerToPlan(*smoothed));
    } catch (const ampc::GraphError &) { // a graph whose loss is no cross entropy
    }
    try {
      ampc::LoraSettings lora;
      lora.rank = 2;
      lora.dropout = 0.1;
      lora.targets = {"all"};
      ampc::runLoraPipeline(*adapted, lora);
      ampc::rt::planToJson(ampc::lowerToPlan(*adapted));
    } catch (const ampc::GraphError &) { // a graph without linear layers
    }
    ampc::runAmpPipeline(*module, ampc::AmpSettings{});
    ampc::rt::planToJson(ampc::lowerToPlan(*module));
    ampc::TrainSettings settings;
    static const char *const optimizers[] = {"sgd",  "momentum", "adam",    "adamw",
                                             "lamb", "lion",     "rmsprop", "adagrad"};
    settings.optimizer = optimizers[size % 8]; // each input trains under one of them
    settings.rmspropCentered = size % 16 == 6; // rmsprop with its three states
    settings.momentum = size % 16 == 6 ? 0.9 : -1.0;
    settings.gradientCheckpointing = true;
    settings.emaDecay = 0.999; // the weight averages beside the updates
    settings.emaWarmup = true;
    ampc::runTrainingPipeline(*training, ampc::AmpSettings{}, settings);
    ampc::rt::planToJson(ampc::lowerToPlan(*training));
  } catch (const ampc::GraphError &) {
  } catch (const ampc::rt::PlanError &) {
  }
  return 0;
}
