// Canonicalization of graph.cast: chains of float casts fold into one cast, and
// a cast to its operand's own dtype disappears (unless it writes a graph
// output, whose name must stay).
#include "mlir/IR/PatternMatch.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc::graph {
namespace {

bool feedsGraphOutput(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *u) { return isa<ReturnOp>(u); });
}

/// cast(cast(x)) -> cast(x) when all three are floats: the outer cast reads x.
struct FoldFloatCastChain : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp cast, PatternRewriter &rewriter) const override {
    auto inner = cast.getX().getDefiningOp<CastOp>();
    if (!inner || !isFloatTensor(inner.getX().getType()) ||
        !isFloatTensor(inner.getType()) || !isFloatTensor(cast.getType()))
      return failure();
    rewriter.modifyOpInPlace(cast, [&] { cast.getXMutable().assign(inner.getX()); });
    return success();
  }
};

/// cast(x) to x's own dtype -> x.
struct EraseNoOpCast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp cast, PatternRewriter &rewriter) const override {
    if (cast.getX().getType() != cast.getType() || feedsGraphOutput(cast))
      return failure();
    rewriter.replaceOp(cast, cast.getX());
    return success();
  }
};

} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *ctx) {
  patterns.add<FoldFloatCastChain, EraseNoOpCast>(ctx);
}

} // namespace ampc::graph
