// Turning MLIR diagnostics into the one-line errors users see.
#ifndef AMPC_COMPILER_DIAGNOSTICS_H
#define AMPC_COMPILER_DIAGNOSTICS_H

#include <stdexcept>
#include <string>

#include "mlir/IR/Diagnostics.h"

namespace ampc {

/// Thrown by the builder API and the loaders for errors a user can cause. The
/// message names the node or value; the CLI prefixes `ampc: error: <file>: `.
struct GraphError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Renders a location the way error lines show it: a name location as it is
/// (the front ends name them `node 'fc'` or `value 'x'`), a file location as
/// `line L:C`.
std::string describeLocation(mlir::Location loc);

/// While alive, captures the first error diagnostic of a context instead of
/// printing it; warnings print at once as `ampc: warning: <message>`, each
/// once per process.
class ErrorCollector {
public:
  explicit ErrorCollector(mlir::MLIRContext *ctx);
  ~ErrorCollector();
  bool hasError() const { return !first_.empty(); }
  const std::string &message() const { return first_; }
  /// Throws GraphError with the captured message, or `fallback` if none.
  [[noreturn]] void raise(const std::string &fallback = "invalid graph") const;

private:
  mlir::MLIRContext *ctx_;
  mlir::DiagnosticEngine::HandlerID id_;
  std::string first_;
};

} // namespace ampc

#endif
