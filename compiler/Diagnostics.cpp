#include "compiler/Diagnostics.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ampc {

std::string describeLocation(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return "line " + std::to_string(file.getLine()) + ":" +
           std::to_string(file.getColumn());
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations()) {
      std::string s = describeLocation(inner);
      if (!s.empty())
        return s;
    }
  return "";
}

ErrorCollector::ErrorCollector(MLIRContext *ctx) : ctx_(ctx) {
  id_ = ctx->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      llvm::errs() << "ampc: warning: " << diag.str() << "\n";
    if (diag.getSeverity() == DiagnosticSeverity::Error && first_.empty()) {
      std::string where = describeLocation(diag.getLocation());
      first_ = where.empty() ? diag.str() : where + ": " + diag.str();
    }
    return success();
  });
}

ErrorCollector::~ErrorCollector() { ctx_->getDiagEngine().eraseHandler(id_); }

void ErrorCollector::raise(const std::string &fallback) const {
  throw GraphError(first_.empty() ? fallback : first_);
}

} // namespace ampc
