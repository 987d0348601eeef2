#include "compiler/Diagnostics.h"

#include <mutex>
#include <set>

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

/// Prints a warning once per process: a command that compiles a graph twice
/// (a training step and its evaluation) says it once.
static void warnOnce(const std::string &message) {
  static std::mutex mutex;
  static std::set<std::string> said;
  std::lock_guard<std::mutex> lock(mutex);
  if (said.insert(message).second)
    llvm::errs() << "ampc: warning: " << message << "\n";
}

ErrorCollector::ErrorCollector(MLIRContext *ctx) : ctx_(ctx) {
  id_ = ctx->getDiagEngine().registerHandler([this](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Warning)
      warnOnce(diag.str());
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
