// graph-fp8: FP8 GEMMs at --dtype fp8 (docs/amp-policy.md, "FP8").
//
// Algorithm: after graph-amp has put the graph in bf16, visit the matmuls
// in order. One qualifies when it computes in bf16 from bf16 operands, one
// operand is 2-D (a layer's weight: batched products of two activations,
// such as attention's scores, stay bf16), M (all result rows), N and K are
// multiples of 16 (what cuBLASLt's FP8 GEMMs take), M·N·K reaches
// `min-size`, and `exclude` names neither the node nor a value it reads
// (before a cast to bf16) or writes. Each qualifying matmul N becomes
//   N.fp8_a, N.fp8_a.amax = fp8_quantize(a, N.fp8_a.scale) to E4M3
//   N.fp8_b, N.fp8_b.amax = fp8_quantize(b, N.fp8_b.scale) to E4M3
//   y = fp8_matmul(N.fp8_a, N.fp8_b, N.fp8_a.scale_inv, N.fp8_b.scale_inv)
// in bf16, keeping N's name and its result's; the scales are state params
// starting at 1, and `grad_scaling = "N.fp8_grad"` names the state with
// which the backward quantizes y's gradient. An operand that is a cast from
// f32 read by this GEMM alone is quantized from the f32 value: one rounding,
// and the cast dies (graph-fold-casts removes it). The amaxes are read by
// graph-fp8-scaling's updates in a training step and by nothing else.
#include "passes/AmpDecision.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "llvm/ADT/StringSet.h"
#include "ops/GradBuilder.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFP8
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

bool isBf16(Value v) { return graph::elementType(v.getType()).isBF16(); }

/// Whether `exclude` names `mm`, its result or an operand (or what the
/// operand casts).
bool excluded(graph::MatmulOp mm, const llvm::StringSet<> &exclude) {
  if (exclude.contains(graph::nodeName(mm)) || exclude.contains(graph::valueName(mm.getY())))
    return true;
  for (Value v : {mm.getA(), mm.getB()}) {
    if (exclude.contains(graph::valueName(v)))
      return true;
    if (auto cast = v.getDefiningOp<graph::CastOp>(); cast && exclude.contains(graph::valueName(cast.getX())))
      return true;
  }
  return false;
}

/// Whether `mm` runs in FP8 (see the algorithm above).
bool qualifies(graph::MatmulOp mm, int64_t minSize, const llvm::StringSet<> &exclude) {
  Value a = mm.getA(), b = mm.getB(), y = mm.getY();
  if (excluded(mm, exclude))
    return false;
  if (!isBf16(a) || !isBf16(b) || !isBf16(y))
    return false;
  if (shapeOf(a).size() != 2 && shapeOf(b).size() != 2)
    return false;
  ArrayRef<int64_t> ys = shapeOf(y);
  int64_t n = ys.back(), m = 1;
  for (int64_t d : ys.drop_back())
    m *= d;
  ArrayRef<int64_t> as = shapeOf(a);
  int64_t k = mm.getTransposeA() ? as[as.size() - 2] : as.back();
  return m % 16 == 0 && n % 16 == 0 && k % 16 == 0 && double(m) * n * k >= double(minSize);
}

struct GraphFp8Pass : impl::GraphFp8Base<GraphFp8Pass> {
  using GraphFp8Base::GraphFp8Base;
  void runOnOperation() override;
};

void GraphFp8Pass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (format != "hybrid" && format != "e4m3") {
    g.emitError("the FP8 format must be hybrid or e4m3, got '") << format << "'";
    return signalPassFailure();
  }
  if (minSize < 0) {
    g.emitError("the FP8 minimum GEMM size must be 0 or more, got ") << static_cast<int64_t>(minSize);
    return signalPassFailure();
  }
  MLIRContext *ctx = g.getContext();
  Type e4m3 = Float8E4M3FNType::get(ctx);
  Type gradFormat = format == "hybrid" ? Type(Float8E5M2Type::get(ctx)) : e4m3;
  auto f32Scalar = RankedTensorType::get({}, Float32Type::get(ctx));
  graph::NameTable names(g);

  llvm::StringSet<> exclude, known;
  for (const std::string &name : this->exclude)
    exclude.insert(name);
  g.walk([&](Operation *op) {
    known.insert(graph::nodeName(op));
    for (Value v : op->getResults())
      known.insert(graph::valueName(v));
  });
  for (const std::string &name : this->exclude)
    if (!known.contains(name)) {
      g.emitError("fp8 exclude: '") << name << "' names no node or value";
      return signalPassFailure();
    }
  SmallVector<graph::MatmulOp> gemms;
  bool anyBf16Gemm = false;
  for (Operation *op : amp::graphNodes(g))
    if (auto mm = dyn_cast<graph::MatmulOp>(op)) {
      anyBf16Gemm |= isBf16(mm.getY());
      if (qualifies(mm, minSize, exclude))
        gemms.push_back(mm);
    }
  if (gemms.empty() && anyBf16Gemm && this->exclude.empty())
    g.emitWarning("--dtype fp8: no GEMM qualifies for FP8 (a 2-D operand, M, N and K "
                  "multiples of 16, M·N·K at least the minimum size): the graph runs in bf16");

  for (graph::MatmulOp mm : gemms) {
    std::string node = graph::nodeName(mm).str();
    OpBuilder b(mm);
    graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
    // The scaling state P: P.scale and P.scale_inv (1 until updated).
    auto addScaling = [&](const std::string &state) {
      Value scale = train::addState(g, names, state + ".scale", f32Scalar, "ones");
      Value inv = train::addState(g, names, state + ".scale_inv", f32Scalar, "ones");
      return std::make_pair(scale, inv);
    };
    auto quantize = [&](Value x, const std::string &state, Value scale) -> Value {
      if (auto cast = x.getDefiningOp<graph::CastOp>())
        if (graph::elementType(cast.getX().getType()).isF32() && cast.getY().hasOneUse())
          x = cast.getX();
      NamedAttrList attrs;
      attrs.set("to", TypeAttr::get(e4m3));
      Operation *q = gb.create("fp8_quantize", state + ".quantize", {x, scale}, attrs);
      if (!q)
        return nullptr;
      q->setAttr("outs", b.getStrArrayAttr({names.fresh(state), names.fresh(state + ".amax")}));
      return q->getResult(0);
    };
    auto [aScale, aInv] = addScaling(node + ".fp8_a");
    auto [bScale, bInv] = addScaling(node + ".fp8_b");
    std::string gradState = node + ".fp8_grad";
    addScaling(gradState);
    Value qa = quantize(mm.getA(), node + ".fp8_a", aScale);
    Value qb = quantize(mm.getB(), node + ".fp8_b", bScale);
    if (!qa || !qb)
      return signalPassFailure();

    NamedAttrList attrs;
    attrs.set("transpose_a", b.getBoolAttr(mm.getTransposeA()));
    attrs.set("transpose_b", b.getBoolAttr(mm.getTransposeB()));
    attrs.set("to", TypeAttr::get(BFloat16Type::get(ctx)));
    attrs.set("grad_scaling", b.getStringAttr(gradState));
    attrs.set("grad_to", TypeAttr::get(gradFormat));
    Operation *fp8 = gb.create("fp8_matmul", node + ".fp8", {qa, qb, aInv, bInv}, attrs);
    if (!fp8)
      return signalPassFailure();
    // The GEMM keeps the matmul's node and value names.
    fp8->setAttr("name", mm->getAttr("name"));
    fp8->setLoc(mm->getLoc());
    fp8->setAttr("outs", b.getStrArrayAttr({graph::valueName(mm.getY())}));
    mm.getY().replaceAllUsesWith(fp8->getResult(0));
    mm->erase();
  }
}

} // namespace
} // namespace ampc
