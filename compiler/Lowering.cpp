#include "compiler/Lowering.h"

#include "compiler/DenseData.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc {

namespace {

/// Whether `use` is an operand that its kernel widens to f32 before use, and
/// so can read an f32 value rounded instead of an f16/bf16 copy: operands of
/// matmul, conv2d and binary elementwise ops, conv2d_backward_input's filter.
bool widenedByKernel(OpOperand &use) {
  Operation *op = use.getOwner();
  if (isa<graph::MatmulOp, graph::Conv2dOp, graph::AddOp, graph::SubOp, graph::MulOp,
          graph::DivOp, graph::MaximumOp, graph::MinimumOp>(op))
    return true;
  return isa<graph::Conv2dBackwardInputOp>(op) && use.getOperandNumber() == 1;
}

/// A cast of an f32 param or input to f16/bf16 whose every reader widens it
/// again: lowering runs no step for it; the readers round the source.
bool fusable(graph::CastOp cast) {
  Operation *source = cast.getX().getDefiningOp();
  if (!source || !isa<graph::ParamOp, graph::InputOp>(source) ||
      !graph::elementType(cast.getX().getType()).isF32() ||
      !isa<Float16Type, BFloat16Type>(graph::elementType(cast.getY().getType())))
    return false;
  return llvm::all_of(cast.getY().getUses(), widenedByKernel);
}

} // namespace

rt::Plan lowerToPlan(ModuleOp module, bool fuseCasts) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  rt::Plan plan;
  plan.name = g.getSymName().str();
  llvm::DenseMap<Value, int> ids;
  llvm::DenseMap<Value, std::string> roundedTo; // fused casts' results
  auto addBuffer = [&](Value v, rt::BufferKind kind) -> rt::Buffer & {
    auto type = cast<RankedTensorType>(v.getType());
    rt::Buffer b;
    b.id = plan.buffers.size();
    b.name = graph::valueName(v).str();
    b.kind = kind;
    b.dtype = *rt::parseDType(graph::dtypeName(type.getElementType()));
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    b.bytes = type.getNumElements() * rt::dtypeSize(b.dtype);
    ids[v] = b.id;
    plan.buffers.push_back(std::move(b));
    return plan.buffers.back();
  };
  for (Operation &op : g.getBody().front()) {
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      plan.inputs.push_back(addBuffer(in, rt::BufferKind::Input).id);
    } else if (auto p = dyn_cast<graph::ParamOp>(op)) {
      rt::Buffer &b = addBuffer(p, rt::BufferKind::Param);
      b.init = p.getInit() ? attrToJson(*p.getInit()) : rt::Json{{"kind", "zeros"}};
      b.trainable = p.getTrainable().value_or(true);
      if (auto master = p.getMasterDtype())
        b.masterDtype = graph::dtypeName(*master);
    } else if (auto c = dyn_cast<graph::ConstOp>(op)) {
      addBuffer(c, rt::BufferKind::Const).data = denseToDoubles(c.getValue());
    } else if (auto c = dyn_cast<graph::ConstantOp>(op)) {
      addBuffer(c.getY(), rt::BufferKind::Const).data = denseToDoubles(c.getValue());
    } else if (auto ret = dyn_cast<graph::ReturnOp>(op)) {
      for (Value v : ret.getOutputs())
        plan.outputs.push_back(ids.lookup(v));
    } else if (auto c = dyn_cast<graph::CastOp>(op); c && fuseCasts && fusable(c)) {
      ids[c.getY()] = ids.lookup(c.getX());
      roundedTo[c.getY()] = graph::dtypeName(graph::elementType(c.getY().getType()));
    } else {
      rt::Step step;
      step.name = graph::nodeName(&op).str();
      step.kernel = op.getName().getStringRef().drop_front(strlen("graph.")).str();
      std::vector<std::string> round;
      for (Value in : op.getOperands()) {
        step.inputs.push_back(ids.lookup(in));
        round.push_back(roundedTo.lookup(in));
      }
      if (llvm::any_of(round, [](const std::string &r) { return !r.empty(); }))
        step.attrs["round_inputs"] = round;
      for (Value out : op.getResults())
        step.outputs.push_back(addBuffer(out, rt::BufferKind::Temp).id);
      NamedAttrList attrs(op.getAttrs());
      op.getName().populateDefaultAttrs(attrs);
      for (NamedAttribute a : attrs)
        if (a.getName() != "name" && a.getName() != "outs")
          step.attrs[a.getName().str()] = attrToJson(a.getValue());
      plan.steps.push_back(std::move(step));
    }
  }
  if (auto loss = g.getLoss())
    plan.loss = plan.find(loss->str());
  rt::planMemory(plan);
  return plan;
}

} // namespace ampc
