#include "compiler/Lowering.h"

#include "compiler/DenseData.h"
#include "compiler/CastFolding.h"
#include "compiler/ElementwiseFusion.h"
#include "compiler/NormActivationFusion.h"
#include "compiler/ResidualGradFusion.h"
#include "compiler/SoftmaxLogitsFusion.h"
#include "compiler/SoftmaxScaleFusion.h"
#include "compiler/EpilogueFusion.h"
#include "compiler/Diagnostics.h"
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/PlanSteps.h"
#include "compiler/Pipelines.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/MemoryPlanner.h"

using namespace mlir;

namespace ampc {

std::string kernelName(Operation *op) {
  return op->getName().getStringRef().drop_front(strlen("graph.")).str();
}

namespace {

/// Whether `use` is an operand that its kernel widens to f32 before use, and
/// so can read an f32 value rounded instead of an f16/bf16 copy (the kernel
/// traits' widened inputs: matmul, conv2d, binary elementwise ops,
/// conv2d_backward_input's filter).
bool widenedByKernel(OpOperand &use) {
  const rt::KernelTraits *traits = rt::findKernelTraits(kernelName(use.getOwner()));
  return traits && traits->widens(use.getOperandNumber());
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

/// A new i64 scalar state buffer called `name` (or `name.N` if taken).
int addCounter(rt::Plan &plan, const std::string &name) {
  std::string unique = name;
  for (int k = 1; plan.find(unique) >= 0; ++k)
    unique = name + "." + std::to_string(k);
  rt::Buffer b;
  b.id = plan.buffers.size();
  b.name = unique;
  b.kind = rt::BufferKind::State;
  b.dtype = rt::DType::I64;
  b.bytes = 8;
  plan.buffers.push_back(std::move(b));
  return plan.buffers.back().id;
}

/// The plan's counters (docs/runtime.md, "Counters"): steps whose kernel
/// reads the run counter (dropout) get it as their last input and a last
/// step advances it; the count of skipped steps adds the finite check's
/// flag, in the check's phase. Both are device state, so a captured step
/// advances them without the host.
void addCounters(rt::Plan &plan) {
  int check = -1;
  std::vector<int> readers;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::KernelTraits *traits = rt::findKernelTraits(plan.steps[i].kernel);
    if (traits && traits->has(rt::kReadsIteration))
      readers.push_back(i);
    if (traits && traits->has(rt::kFlagsNonFinite) && !plan.steps[i].outputs.empty())
      check = i;
  }
  if (check >= 0) {
    plan.skippedSteps = addCounter(plan, "skipped_steps");
    rt::Step count{"skipped_steps.count", "increment",
                   {plan.skippedSteps, plan.steps[check].outputs.back()}, {}, rt::Json::object()};
    if (plan.steps[check].attrs.contains("phase"))
      count.attrs["phase"] = plan.steps[check].attrs["phase"];
    plan.steps.push_back(std::move(count));
  }
  if (!readers.empty()) {
    plan.iteration = addCounter(plan, "iteration");
    for (int i : readers)
      plan.steps[i].inputs.push_back(plan.iteration);
    plan.steps.push_back({"iteration.advance", "increment", {plan.iteration}, {}, rt::Json::object()});
  }
}

/// Whether `s` reads or writes buffer `id`.
bool touches(const rt::Step &s, int id) {
  return llvm::is_contained(s.inputs, id) || llvm::is_contained(s.outputs, id);
}

/// The optimizer update of `value` that `assign(copy, value)` can fold
/// into: the last update of `value` before it, in the same phase, with no
/// step between them touching either buffer; or null.
rt::Step *updateBefore(std::vector<rt::Step> &steps, const rt::Step &assign,
                       const rt::Plan &plan) {
  int copy = assign.inputs[0], value = assign.inputs[1];
  const rt::Buffer &c = plan.buffers[copy], &v = plan.buffers[value];
  if (!rt::isFloat(c.dtype) || c.shape != v.shape)
    return nullptr;
  auto phase = [](const rt::Step &x) { return x.attrs.value("phase", ""); };
  for (auto u = steps.rbegin(); u != steps.rend(); ++u) {
    const rt::KernelTraits *traits = rt::findKernelTraits(u->kernel);
    if (traits && traits->has(rt::kOptimizerUpdate) && u->inputs[0] == value)
      return phase(*u) == phase(assign) && !u->attrs.contains(rt::kWritesCopy) ? &*u : nullptr;
    if (touches(*u, copy) || touches(*u, value))
      return nullptr;
  }
  return nullptr;
}

/// Folds each `assign(copy, p)` that refreshes a low-precision copy after
/// the optimizer update of `p` (an O2 master's param, an O1 weight copy)
/// into that update, which then writes the copy in the same pass
/// (`writes_copy`, the copy as its last input). An update skipped for a
/// non-finite gradient leaves `p`, so its copy, as it was: the same bytes
/// as the unconditional assign.
void fuseUpdateCopies(rt::Plan &plan) {
  std::vector<rt::Step> kept;
  for (rt::Step &s : plan.steps) {
    rt::Step *update = s.kernel == "assign" && s.inputs.size() == 2
                           ? updateBefore(kept, s, plan)
                           : nullptr;
    if (update) {
      update->inputs.push_back(s.inputs[0]);
      update->attrs[rt::kWritesCopy] = true;
    } else {
      kept.push_back(std::move(s));
    }
  }
  plan.steps = std::move(kept);
}

rt::Plan lowerModule(ModuleOp module, const rt::Target &target, const ProbeOptions &probes,
                     const Fusions &fusions) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  rt::Plan plan;
  plan.name = g.getSymName().str();
  plan.target = target;
  bool fuseCasts = target.fusedCasts;
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
      step.kernel = kernelName(&op);
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
  fuseUpdateCopies(plan);
  bool probed = probes.mode != ProbeOptions::Mode::None;
  if (target.gemmEpilogues && fusions.gemmEpilogues)
    fuseGemmEpilogues(plan);
  if (target.gemmEpilogues && fusions.gradEpilogues && !probed)
    fuseGradEpilogues(plan);
  if (fusions.castFolding && !probed)
    foldCasts(plan);
  if (target.elementwiseChains && fusions.softmaxScales && !probed)
    fuseSoftmaxScales(plan);
  if (target.elementwiseChains && fusions.softmaxLogits && !probed)
    fuseSoftmaxLogits(plan);
  if (target.elementwiseChains && fusions.normActivations && !probed)
    fuseNormActivations(plan);
  if (target.elementwiseChains && fusions.residualGrads && !probed)
    fuseResidualGrads(plan);
  if (target.elementwiseChains && fusions.elementwiseChains && !probed)
    fuseElementwiseChains(plan);
  dropUnusedTemps(plan);
  addProbes(plan, probes);
  addCounters(plan);
  rt::planMemory(plan);
  return plan;
}

} // namespace

rt::Plan lowerToPlan(ModuleOp module, const rt::Target &target, const ProbeOptions &probes,
                     const Fusions &fusions) {
  if (!hasTargetPasses(target) || !fusions.weightCopies)
    return lowerModule(module, target, probes, fusions);
  OwningOpRef<ModuleOp> lowered = module.clone(); // the caller's module stays as it is
  runTargetPasses(*lowered, target);
  return lowerModule(*lowered, target, probes, fusions);
}

} // namespace ampc
