// Params picked by name for training options (--freeze, --train-only,
// --lr-scale): globs that match a param's whole name or a module of it, its
// name up to a dot (docs/training.md, "Freezing").
#ifndef AMPC_PASSES_PARAMPATTERNS_H
#define AMPC_PASSES_PARAMPATTERNS_H

#include <memory>
#include <string>
#include <vector>

#include "ops/GraphOps.h"
#include "llvm/Support/GlobPattern.h"

namespace ampc::train {

class ParamPatterns {
public:
  /// The globs of `patterns`, or failure after an error on `g` naming
  /// `option`: a malformed glob, or one that matches no param of the graph
  /// (with the nearest module or name).
  static mlir::FailureOr<ParamPatterns> compile(graph::GraphOp g, llvm::StringRef option,
                                                llvm::ArrayRef<std::string> patterns);

  /// The index of the first pattern that matches `param`, or -1.
  int match(llvm::StringRef param) const;
  bool matches(llvm::StringRef param) const { return match(param) >= 0; }
  bool empty() const { return globs_.empty(); }

private:
  // A GlobPattern refers to its pattern's text: each text has a place of its
  // own, kept across moves (no copies).
  std::vector<std::unique_ptr<std::string>> texts_;
  std::vector<llvm::GlobPattern> globs_;
};

} // namespace ampc::train

#endif
