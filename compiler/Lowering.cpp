#include "compiler/Lowering.h"

#include "compiler/DenseData.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc {

rt::Plan lowerToPlan(ModuleOp module) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  rt::Plan plan;
  plan.name = g.getSymName().str();
  llvm::DenseMap<Value, int> ids;
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
    } else {
      rt::Step step;
      step.name = graph::nodeName(&op).str();
      step.kernel = op.getName().getStringRef().drop_front(strlen("graph.")).str();
      for (Value in : op.getOperands())
        step.inputs.push_back(ids.lookup(in));
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
