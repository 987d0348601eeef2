#include "passes/TrainingUtil.h"

#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace ampc::train {

Value findValue(graph::GraphOp g, StringRef name) {
  for (Operation &op : g.getBody().front())
    for (Value v : op.getResults())
      if (graph::valueName(v) == name)
        return v;
  return nullptr;
}

int64_t tensorBytes(Value v) {
  auto t = cast<ShapedType>(v.getType());
  return t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
}

std::vector<graph::ParamOp> trainableParams(graph::GraphOp g) {
  std::vector<graph::ParamOp> params;
  for (auto p : g.getOps<graph::ParamOp>())
    if (graph::isFloatTensor(p.getType()) && p.getTrainable().value_or(true))
      params.push_back(p);
  return params;
}

OpBuilder afterValueOps(graph::GraphOp g) {
  Block &body = g.getBody().front();
  Operation *last = nullptr;
  for (Operation &op : body)
    if (graph::isValueOp(&op))
      last = &op;
  OpBuilder b(g.getContext());
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(&body);
  return b;
}

Value addState(graph::GraphOp g, graph::NameTable &names, StringRef name,
               RankedTensorType type, StringRef initKind, double value) {
  OpBuilder b = afterValueOps(g);
  std::string fresh = names.fresh(name);
  NamedAttrList init;
  init.set("kind", b.getStringAttr(initKind));
  if (initKind == "constant")
    init.set("value", b.getF64FloatAttr(value));
  auto p = b.create<graph::ParamOp>(NameLoc::get(b.getStringAttr("value '" + fresh + "'")),
                                    type, b.getStringAttr(fresh),
                                    init.getDictionary(g.getContext()), b.getBoolAttr(false),
                                    nullptr, nullptr);
  return p.getValue();
}

void markApplyPhase(Operation *op) {
  op->setAttr("phase", StringAttr::get(op->getContext(), "apply"));
}

void markFirstPhase(Operation *op) {
  op->setAttr("phase", StringAttr::get(op->getContext(), "first"));
}

bool isApplyPhase(Operation *op) {
  auto phase = op->getAttrOfType<StringAttr>("phase");
  return phase && phase.getValue() == "apply";
}

bool isOptimizerUpdate(Operation *op) {
  return isa<graph::SgdOp, graph::MomentumOp, graph::AdamOp, graph::LambOp, graph::LionOp,
             graph::RmspropOp, graph::AdagradOp>(op);
}

Value gradScaleOf(Operation *op) {
  return TypeSwitch<Operation *, Value>(op)
      .Case<graph::SgdOp, graph::MomentumOp, graph::AdamOp, graph::LambOp, graph::LionOp,
            graph::RmspropOp, graph::AdagradOp>(
          [](auto update) { return update.getGradScale(); })
      .Default([](Operation *) { return Value(); });
}

OpBuilder atEnd(graph::GraphOp g) {
  OpBuilder b(g.getContext());
  b.setInsertionPoint(g.getBody().front().getTerminator());
  return b;
}

} // namespace ampc::train
