// graph-fp8-scaling: delayed scaling of the FP8 operands in a training step
// (docs/amp-policy.md, "FP8").
//
// Algorithm: after graph-autodiff, for every fp8_quantize whose `scale` is a
// param named `P.scale` with a sibling `P.scale_inv` (the scaling states
// graph-fp8 makes, for forward operands and, through the backward,
// gradients), add the state `P.amax_history` (zeros) and, before the
// terminator, an `fp8_scale_update` of P from the quantize's amax, with the
// format's largest value (448 for E4M3, 57344 for E5M2). Updates write
// their state after every read of it in the step, so this step's GEMMs use
// the scale that the previous steps' amaxes gave: Transformer Engine's
// delayed scaling. Any other quantize keeps its scale (a static scale).
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

#include "mlir/IR/Verifier.h"
#include "ops/GradBuilder.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFP8SCALING
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

struct GraphFp8ScalingPass : impl::GraphFp8ScalingBase<GraphFp8ScalingPass> {
  using GraphFp8ScalingBase::GraphFp8ScalingBase;
  void runOnOperation() override;
};

void GraphFp8ScalingPass::runOnOperation() {
  graph::GraphOp g = getOperation();
  if (amaxHistory < 1) {
    g.emitError("the FP8 amax history must hold at least 1 step, got ") << static_cast<int64_t>(amaxHistory);
    return signalPassFailure();
  }
  if (amaxCompute != "max" && amaxCompute != "most_recent") {
    g.emitError("the FP8 amax compute must be max or most_recent, got '") << amaxCompute << "'";
    return signalPassFailure();
  }
  if (margin < 0 || margin > 64) {
    g.emitError("the FP8 margin must be from 0 to 64, got ") << static_cast<int64_t>(margin);
    return signalPassFailure();
  }
  SmallVector<graph::Fp8QuantizeOp> quantizes(g.getBody().getOps<graph::Fp8QuantizeOp>());
  graph::NameTable names(g);
  OpBuilder b = train::atEnd(g);
  graph::GradBuilder gb(b, [&](StringRef n) { return names.fresh(n); });
  MLIRContext *ctx = g.getContext();
  llvm::DenseSet<Value> updated;
  for (graph::Fp8QuantizeOp q : quantizes) {
    auto param = q.getScale().getDefiningOp<graph::ParamOp>();
    if (!param || !param.getName().ends_with(".scale"))
      continue;
    std::string state = param.getName().drop_back(strlen(".scale")).str();
    Value inv = train::findValue(g, state + ".scale_inv");
    if (!inv || !inv.getDefiningOp<graph::ParamOp>())
      continue;
    if (!updated.insert(q.getScale()).second) {
      q.emitError("the FP8 scaling state '") << state << "' is read by two quantizes; "
                                             << "each needs its own amax history";
      return signalPassFailure();
    }
    Value history = train::addState(
        g, names, state + ".amax_history",
        RankedTensorType::get({amaxHistory}, Float32Type::get(ctx)), "zeros");
    bool e4m3 = graph::elementType(q.getY().getType()).isFloat8E4M3FN();
    NamedAttrList attrs;
    attrs.set("fp8_max", b.getF64FloatAttr(e4m3 ? 448.0 : 57344.0));
    attrs.set("margin", b.getI64IntegerAttr(margin));
    attrs.set("amax_compute", b.getStringAttr(amaxCompute));
    Operation *update = gb.create("fp8_scale_update", state + ".update",
                                  {history, q.getScale(), inv, q.getAmax()}, attrs);
    if (!update || failed(verify(update)))
      return signalPassFailure();
  }
}

} // namespace
} // namespace ampc
