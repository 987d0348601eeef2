// Canonicalization of graph.cast: a chain of float casts whose first cast
// widens exactly folds into one cast, and a cast to its operand's own dtype
// disappears (unless it writes a graph output, whose name must stay). A
// chain that narrows first is kept: narrowing rounds, and a user's f32 ->
// f16 -> f32 round trip is there to see that rounding.
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc::graph {
namespace {

bool feedsGraphOutput(Value v) {
  return llvm::any_of(v.getUsers(), [](Operation *u) { return isa<ReturnOp>(u); });
}

/// Whether every value of float type `from` is one of float type `to`:
/// f16 and bf16 in f32, and all three in f64.
bool widensExactly(Type from, Type to) {
  from = getElementTypeOrSelf(from), to = getElementTypeOrSelf(to);
  return from == to || to.isF64() || (to.isF32() && (from.isF16() || from.isBF16()));
}

/// cast(cast(x)) -> cast(x) when all three are floats and the inner cast
/// widens exactly: the outer cast then reads the same value from x.
struct FoldFloatCastChain : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp cast, PatternRewriter &rewriter) const override {
    auto inner = cast.getX().getDefiningOp<CastOp>();
    if (!inner || !isFloatTensor(inner.getX().getType()) ||
        !isFloatTensor(inner.getType()) || !isFloatTensor(cast.getType()) ||
        !widensExactly(inner.getX().getType(), inner.getType()))
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
