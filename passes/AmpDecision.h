// The AMP precision decision (docs/amp-policy.md, "The decision"): which nodes compute in the
// low-precision dtype L and which stay f32. Shared by the AMP pass and by the
// tests that compare it with Paddle's rule.
#ifndef AMPC_PASSES_AMPDECISION_H
#define AMPC_PASSES_AMPDECISION_H

#include <string>
#include <vector>

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "ops/GraphOps.h"

namespace ampc::amp {

enum class Level { O0, O1, O2, O3 };

/// L: computes in the low-precision dtype. Black: F32-BLACK, taints gray
/// consumers. Neutral: F32-NEUTRAL, stays f32 without tainting.
enum class Precision { Low, Black, Neutral };

struct AmpConfig {
  Level level = Level::O1;
  mlir::Type low;
  /// Op name without `graph.` -> the list a custom list moves it to.
  llvm::StringMap<graph::AmpCategory> categoryOverride;
  llvm::StringSet<> blackVarnames;
  /// Rule 4 (precision-agnostic ops take the cast upstream) and low-precision
  /// operands left uncast in the slots an op widens exactly. Off gives
  /// Paddle's rule: gray follows producers, black wins, every f32 consumer
  /// gets a cast.
  bool moveCastsUpstream = true;
};

struct AmpLists {
  std::vector<std::string> white, black, gray, blackVarnames;
};

/// Checks the options against the graph (known levels, dtypes and ops, no op
/// in two lists, varnames that name values) and builds the config. Emits an
/// error on the graph op on failure.
mlir::FailureOr<AmpConfig> makeConfig(graph::GraphOp g, llvm::StringRef level,
                                      llvm::StringRef dtype, const AmpLists &lists);

/// The op's list after the custom lists.
graph::AmpCategory categoryOf(mlir::Operation *op, const AmpConfig &config);

/// True when operand `index` of `op` stays f32 whatever `op` computes in.
bool keepsOperandF32(mlir::Operation *op, unsigned index);

/// True when operand `index` of `op` may stay in low precision (the op widens
/// it exactly while computing in f32).
bool widensOperand(mlir::Operation *op, unsigned index);

/// The node ops of a graph in block (topological) order.
std::vector<mlir::Operation *> graphNodes(graph::GraphOp g);

using Decisions = llvm::DenseMap<mlir::Operation *, Precision>;

/// Rules 1-4 (O1), or the O2/O3 rules. The node producing the loss always
/// stays f32.
Decisions decide(graph::GraphOp g, const AmpConfig &config);

} // namespace ampc::amp

#endif
