#include "compiler/Lowering.h"

#include "compiler/DenseData.h"
#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/Pipelines.h"
#include "compiler/plan/PlanOptimizer.h"
#include "compiler/plan/PlanPass.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/KernelTraits.h"

using namespace mlir;

namespace ampc {

std::optional<rt::Kernel> kernelOf(Operation *op) {
  llvm::StringRef name = op->getName().getStringRef();
  if (!name.consume_front("graph."))
    return std::nullopt;
  return rt::kernelNamed(std::string_view(name.data(), name.size()));
}

namespace {

/// Whether `use` is an operand that its kernel widens to f32 before use, and
/// so can read an f32 value rounded instead of an f16/bf16 copy (the kernel
/// traits' widened inputs: matmul, conv2d, binary elementwise ops,
/// conv2d_backward_input's filter).
bool widenedByKernel(OpOperand &use) {
  std::optional<rt::Kernel> kernel = kernelOf(use.getOwner());
  return kernel && rt::traitsOf(*kernel).widens(use.getOperandNumber());
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

rt::Plan lowerModule(ModuleOp module, const rt::Target &target, const PlanOptions &options) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  rt::Plan plan;
  plan.name = g.getSymName().str();
  plan.target = target;
  bool fuseCasts = target.fusedCasts;
  llvm::DenseMap<Value, int> ids;
  llvm::DenseMap<Value, std::string> roundedTo; // fused casts' results
  auto addBuffer = [&](Value v, rt::BufferKind kind) -> rt::Buffer & {
    auto type = cast<RankedTensorType>(v.getType());
    int id = plan.addBuffer(graph::valueName(v).str(), kind,
                            *rt::parseDType(graph::dtypeName(type.getElementType())),
                            {type.getShape().begin(), type.getShape().end()});
    ids[v] = id;
    return plan.buffers[id];
  };
  for (Operation &op : g.getBody().front()) {
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      plan.inputs.push_back(addBuffer(in, rt::BufferKind::Input).id);
    } else if (auto p = dyn_cast<graph::ParamOp>(op)) {
      rt::Buffer &b = addBuffer(p, rt::BufferKind::Param);
      b.init = p.getInit() ? initFieldsToJson(*p.getInit()) : rt::Json{{"kind", "zeros"}};
      if (auto data = p.getInit() ? p.getInit()->getAs<DenseElementsAttr>("data") : nullptr)
        b.data = denseToDoubles(data); // the values travel in the buffer's data
      b.trainable = p.getTrainable().value_or(true);
      if (auto master = p.getMasterDtype())
        b.masterDtype = graph::dtypeName(*master);
      if (auto source = p.getCopyOf()) {
        b.copyOf = plan.find(source->str());
        if (b.copyOf < 0)
          throw GraphError("param '" + b.name + "': copy_of names no param before it");
      }
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
      std::optional<rt::Kernel> kernel = kernelOf(&op);
      if (!kernel)
        throw GraphError("node '" + step.name + "': op '" + op.getName().getStringRef().str() +
                         "' has no kernel");
      step.kernel = *kernel;
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
  plan::optimizePlan(plan, options);
  // A step the target cannot run (attention beyond its head_dim) is refused
  // here, when it is compiled, rather than by the executor.
  for (const rt::Step &step : plan.steps)
    rt::checkStepContract(plan, step);
  return plan;
}

} // namespace

rt::Plan lowerToPlan(ModuleOp module, const rt::Target &target, const PlanOptions &options) {
  if (!hasTargetPasses(target) || !options.fusions.enabled(plan::weightCopies))
    return lowerModule(module, target, options);
  OwningOpRef<ModuleOp> lowered = module.clone(); // the caller's module stays as it is
  runTargetPasses(*lowered, target);
  return lowerModule(*lowered, target, options);
}

} // namespace ampc
