// The AMP pass (graph-amp).
//
// Algorithm: check that the graph is a forward graph and that the options
// are valid; decide each node's precision (passes/AmpDecision.cpp). At O2,
// store in L the params that feed L nodes, recording their f32 master dtype.
// Then, in topological order, give every node's float operands the dtype the
// node computes in (f32 for slots that stay f32) through one shared cast per
// (value, dtype), and re-infer the node's result types. A graph output whose
// producer now computes in L keeps its name and dtype: the producer writes a
// new value `<name>.<L>` and a cast writes `<name>`. A cast of a node's
// result goes right after the node; a cast of an input, param or const goes
// right before its first consumer, so the low-precision copy lives only while
// it is needed and the graph still lists its values first. Existing casts are
// kept; graph-fold-casts cleans up after. An f32 node takes a low-precision
// value uncast in the slots its op widens exactly (the logits of
// softmax_cross_entropy): no f32 copy of them is made.
#include "passes/AmpDecision.h"
#include "passes/Passes.h"

#include "llvm/ADT/StringSet.h"
#include "mlir/IR/Builders.h"
#include "ops/GraphNames.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHAMP
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

using amp::Decisions;
using amp::Precision;

class CastInserter {
public:
  explicit CastInserter(graph::GraphOp g) : builder_(g.getContext()), names_(g) {}

  /// The value `v` in dtype `element` for `user`: `v` itself or its one
  /// shared cast. Nodes are rewritten in order, so the first user to ask is
  /// the first consumer.
  Value castOf(Value v, Type element, Operation *user) {
    if (graph::elementType(v.getType()) == element)
      return v;
    auto key = std::make_pair(v, element);
    if (Value cached = casts_.lookup(key))
      return cached;
    std::string name =
        fresh((graph::valueName(v) + ".cast_" + graph::dtypeName(element)).str());
    Operation *def = v.getDefiningOp();
    if (graph::isValueOp(def))
      builder_.setInsertionPoint(user);
    else
      builder_.setInsertionPointAfter(def);
    Value cast = createCast(name, v, element, nullptr);
    casts_[key] = cast;
    return cast;
  }

  /// Gives `op`'s operands the dtype it computes in, then re-infers its results.
  LogicalResult rewrite(Operation *op, Precision precision, Type low, bool widen) {
    if (isa<graph::CastOp, graph::ConstantOp, graph::FillOp, graph::Fp8QuantizeOp,
            graph::Fp8MatmulOp>(op))
      return success(); // their dtypes are what they say
    Type target = precision == Precision::Low ? low : computeType(op);
    if (!target)
      return success(); // no float results: nothing computes in a float dtype
    Type f32 = Float32Type::get(op->getContext());
    for (OpOperand &use : op->getOpOperands()) {
      if (!graph::isFloatTensor(use.get().getType()))
        continue;
      Type have = graph::elementType(use.get().getType());
      if (widen && precision != Precision::Low &&
          amp::widensOperand(op, use.getOperandNumber()) && (have.isF16() || have.isBF16()))
        continue; // the op widens it itself: no f32 copy
      Type want = amp::keepsOperandF32(op, use.getOperandNumber()) ? f32 : target;
      use.set(castOf(use.get(), want, op));
    }
    auto infer = dyn_cast<graph::NodeTypeInference>(op);
    if (!infer)
      return success();
    SmallVector<Type> types;
    if (failed(infer.inferNodeTypes(op->getLoc(), op->getOperands(),
                                    op->getAttrDictionary(), types)))
      return failure();
    for (auto [result, type] : llvm::zip(op->getResults(), types)) {
      Type before = result.getType();
      result.setType(type);
      if (before != type)
        keepOutputName(result, before);
    }
    return success();
  }

private:
  static Type computeType(Operation *op) {
    for (Value r : op->getResults())
      if (graph::isFloatTensor(r.getType()))
        return graph::elementType(r.getType());
    return nullptr;
  }

  std::string fresh(const std::string &base) { return names_.fresh(base); }

  Value createCast(StringRef node, Value x, Type element, ArrayAttr outs) {
    auto type = RankedTensorType::get(cast<RankedTensorType>(x.getType()).getShape(),
                                      element);
    Location loc = NameLoc::get(builder_.getStringAttr("node '" + node + "'"));
    return builder_.create<graph::CastOp>(loc, type, builder_.getStringAttr(node), x,
                                          TypeAttr::get(element), outs);
  }

  /// A graph output keeps its name and dtype through a cast from the
  /// producer's new value.
  void keepOutputName(OpResult result, Type original) {
    SmallVector<OpOperand *> outputUses;
    for (OpOperand &use : result.getUses())
      if (isa<graph::ReturnOp>(use.getOwner()))
        outputUses.push_back(&use);
    if (outputUses.empty())
      return;
    Operation *producer = result.getOwner();
    std::string name = graph::valueName(result).str();
    std::string renamed =
        fresh(name + "." + graph::dtypeName(graph::elementType(result.getType())));
    SmallVector<Attribute> outs;
    for (Value r : producer->getResults())
      outs.push_back(builder_.getStringAttr(r == result ? StringRef(renamed)
                                                        : graph::valueName(r)));
    producer->setAttr("outs", builder_.getArrayAttr(outs));

    Type element = graph::elementType(original);
    builder_.setInsertionPointAfter(producer);
    Value cast = createCast(fresh(name + ".cast_" + graph::dtypeName(element)), result,
                            element, builder_.getStrArrayAttr({name}));
    for (OpOperand *use : outputUses)
      use->set(cast);
    casts_[{result, element}] = cast;
  }

  OpBuilder builder_;
  graph::NameTable names_;
  llvm::DenseMap<std::pair<Value, Type>, Value> casts_;
};

/// O2: params that feed L nodes are stored in L; `master_dtype` records the
/// f32 master copy the optimizer keeps.
void storeParamsInLow(graph::GraphOp g, const Decisions &d, Type low) {
  for (auto param : g.getOps<graph::ParamOp>()) {
    Value v = param.getValue();
    if (!graph::isFloatTensor(v.getType()) || param.getMasterDtype())
      continue;
    bool feedsLow = false, isOutput = false;
    for (OpOperand &use : v.getUses()) {
      Operation *user = use.getOwner();
      isOutput |= isa<graph::ReturnOp>(user);
      auto it = d.find(user);
      feedsLow |= it != d.end() && it->second == Precision::Low &&
                  !isa<graph::CastOp>(user) &&
                  !amp::keepsOperandF32(user, use.getOperandNumber());
    }
    Type element = graph::elementType(v.getType());
    if (!feedsLow || isOutput || element == low)
      continue;
    param.setMasterDtypeAttr(TypeAttr::get(element));
    v.setType(RankedTensorType::get(cast<RankedTensorType>(v.getType()).getShape(), low));
  }
}

struct GraphAmpPass : impl::GraphAmpBase<GraphAmpPass> {
  using GraphAmpBase::GraphAmpBase;

  void runOnOperation() override {
    graph::GraphOp g = getOperation();
    for (Operation *op : amp::graphNodes(g))
      if (!isa<graph::AmpOpInterface>(op)) {
        op->emitError("the AMP pass takes forward graphs; node '")
            << graph::nodeName(op) << "' (" << op->getName()
            << ") belongs to a training graph";
        return signalPassFailure();
      }
    amp::AmpLists lists{customWhiteList, customBlackList, customGrayList,
                        customBlackVarnames};
    FailureOr<amp::AmpConfig> config = amp::makeConfig(g, level, dtype, lists);
    if (failed(config))
      return signalPassFailure();
    config->moveCastsUpstream = moveCastsUpstream;
    if (config->level == amp::Level::O0)
      return;
    if (config->level == amp::Level::O3)
      g.emitWarning("O3 computes every node but the loss in ")
          << dtype << "; it is meant for inference experiments";
    Decisions d = amp::decide(g, *config);
    if (config->level == amp::Level::O2)
      storeParamsInLow(g, d, config->low);
    CastInserter inserter(g);
    for (Operation *op : amp::graphNodes(g))
      if (failed(inserter.rewrite(op, d.lookup(op), config->low, config->moveCastsUpstream)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace ampc
