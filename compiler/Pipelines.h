// Pass pipelines over a loaded graph.
#ifndef AMPC_COMPILER_PIPELINES_H
#define AMPC_COMPILER_PIPELINES_H

#include "mlir/IR/BuiltinOps.h"
#include "passes/Passes.h"

namespace ampc {

/// The AMP options (SPEC section 4), owning their lists.
struct AmpSettings {
  std::string level = "O1", dtype = "f16";
  std::vector<std::string> customWhiteList, customBlackList, customGrayList,
      customBlackVarnames;
  /// Rule 4; off gives Paddle's rule (for comparisons).
  bool moveCastsUpstream = true;
};

struct IrPrinting {
  bool beforeAmp = false, afterAmp = false;
};

/// Runs the AMP pass and the cast cleanup (graph-amp, graph-fold-casts) on
/// every graph of the module. Warnings print as `ampc: warning: ...`; errors
/// throw GraphError. IR dumps go to stderr through MLIR's IR printing.
void runAmpPipeline(mlir::ModuleOp module, const AmpSettings &settings,
                    IrPrinting printing = {});

} // namespace ampc

#endif
