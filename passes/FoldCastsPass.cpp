// graph-fold-casts. Algorithm: collect the graph's casts and run graph.cast's
// canonicalization patterns (ops/CastCanonicalization.cpp) on them alone with the
// greedy driver, which also erases the casts left without users. Other
// nodes are not visited, so an unused user node is never removed.
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "passes/Passes.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFOLDCASTS
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphFoldCastsPass : impl::GraphFoldCastsBase<GraphFoldCastsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    graph::CastOp::getCanonicalizationPatterns(patterns, &getContext());
    SmallVector<Operation *> casts;
    getOperation().walk([&](graph::CastOp c) { casts.push_back(c); });
    GreedyRewriteConfig config;
    config.strictMode = GreedyRewriteStrictness::ExistingAndNewOps;
    (void)applyOpPatternsAndFold(casts, std::move(patterns), config);
  }
};

} // namespace
} // namespace ampc
