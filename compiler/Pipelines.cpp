#include "compiler/Pipelines.h"

#include "compiler/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

using namespace mlir;

namespace ampc {

void runAmpPipeline(ModuleOp module, const AmpSettings &settings, IrPrinting printing) {
  GraphAmpOptions options;
  options.level = settings.level;
  options.dtype = settings.dtype;
  options.customWhiteList = settings.customWhiteList;
  options.customBlackList = settings.customBlackList;
  options.customGrayList = settings.customGrayList;
  options.customBlackVarnames = settings.customBlackVarnames;
  options.moveCastsUpstream = settings.moveCastsUpstream;
  MLIRContext *ctx = module.getContext();
  PassManager pm(ctx);
  OpPassManager &graphPm = pm.nest<graph::GraphOp>();
  graphPm.addPass(createGraphAmp(options));
  graphPm.addPass(createGraphFoldCasts());
  if (printing.beforeAmp || printing.afterAmp) {
    ctx->disableMultithreading();
    auto isAmp = [](Pass *pass) { return pass->getArgument() == "graph-amp"; };
    pm.enableIRPrinting(
        [&](Pass *pass, Operation *) { return printing.beforeAmp && isAmp(pass); },
        [&](Pass *pass, Operation *) { return printing.afterAmp && isAmp(pass); },
        /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false);
  }
  ErrorCollector errors(ctx);
  if (failed(pm.run(module)))
    errors.raise("the AMP pipeline failed");
}

} // namespace ampc
