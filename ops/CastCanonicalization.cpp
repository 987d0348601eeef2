// Canonicalization of graph.cast: a chain of float casts whose first cast
// widens exactly folds into one cast, and a cast to its operand's own dtype
// disappears (unless it writes a graph output, whose name must stay), and a
// float cast that is a float fill's only reader becomes the fill, its value
// rounded at compile time (imported clamp bounds and pads), and so does a
// float constant a cast alone reads. A chain that
// narrows first is kept: narrowing rounds, and a user's f32 -> f16 -> f32
// round trip is there to see that rounding.
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

/// cast(fill(v)) -> fill(v as the cast would read it), when the cast is the
/// fill's only reader and both are floats: v is rounded to the fill's dtype,
/// then to the cast's (RNE both times, as the runtime rounds; overflow is
/// infinite), so the values are the same bits.
struct FoldCastOfFill : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp cast, PatternRewriter &rewriter) const override {
    auto fill = cast.getX().getDefiningOp<FillOp>();
    if (!fill || !fill->hasOneUse() || feedsGraphOutput(cast) ||
        !isFloatTensor(fill.getType()) || !isFloatTensor(cast.getType()))
      return failure();
    APFloat v = fill.getValue();
    bool lost;
    for (Type t : {getElementTypeOrSelf(fill.getType()), getElementTypeOrSelf(cast.getType())})
      v.convert(llvm::cast<FloatType>(t).getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    v.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    rewriter.modifyOpInPlace(fill, [&] {
      fill.setValue(v);
      fill.getResult().setType(cast.getType());
    });
    rewriter.replaceOp(cast, fill.getResult());
    return success();
  }
};

/// cast(constant) -> the constant in the cast's dtype, when the cast is the
/// constant's only reader, the constant is f32, f16 or bf16 and the cast
/// to one of those or f64, and no element is NaN: each element
/// rounded RNE as the runtime's cast rounds it (overflow is infinite), so
/// the values are the same bits and no step casts them again (the rotary
/// tables and imported constants a white op reads at O1). FP8 saturates
/// instead and stays a cast.
struct FoldCastOfConstant : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(CastOp cast, PatternRewriter &rewriter) const override {
    auto constant = cast.getX().getDefiningOp<ConstantOp>();
    auto ieee = [](Type t, bool orF64) {
      t = getElementTypeOrSelf(t);
      return (orF64 && t.isF64()) || t.isF32() || t.isF16() || t.isBF16();
    };
    if (!constant || !constant->hasOneUse() || feedsGraphOutput(cast) ||
        !ieee(constant.getType(), false) || !ieee(cast.getType(), true))
      return failure();
    // A NaN's bits after the runtime's cast are its own: left to it.
    auto values = llvm::dyn_cast<DenseFPElementsAttr>(constant.getValue());
    if (!values || llvm::any_of(values.getValues<APFloat>(),
                                [](const APFloat &v) { return v.isNaN(); }))
      return failure();
    auto to = llvm::cast<FloatType>(getElementTypeOrSelf(cast.getType()));
    DenseElementsAttr rounded = values.mapValues(to, [&](const APFloat &v) {
      APFloat r = v;
      bool lost;
      r.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      return r.bitcastToAPInt();
    });
    rewriter.modifyOpInPlace(constant, [&] {
      constant.setValueAttr(rounded);
      constant.getResult().setType(cast.getType());
    });
    rewriter.replaceOp(cast, constant.getResult());
    return success();
  }
};

} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns, MLIRContext *ctx) {
  patterns.add<FoldFloatCastChain, EraseNoOpCast, FoldCastOfFill, FoldCastOfConstant>(ctx);
}

} // namespace ampc::graph
