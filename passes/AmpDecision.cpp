// Algorithm (docs/amp-policy.md, "The decision", O1): visit the nodes in topological order.
//  1. F32-BLACK: a black op, an op in no list, or a node touching a custom
//     black varname (and the node that produces the loss).
//  2. White: L.
//  3. Gray: F32-BLACK if a float input comes from an F32-BLACK node, else L if
//     one comes from an L node, else F32-NEUTRAL. Inputs, params and consts
//     count for neither; constant/fill are F32-NEUTRAL; an existing cast is L
//     when it produces L.
//  4. In reverse order, a precision-agnostic gray F32-NEUTRAL node with a
//     float input, no graph output and only L consumers becomes L: its cast
//     moves upstream, where one cast can serve several such nodes. A node
//     of several float inputs (a concat) moves only where they all come
//     from one value through such nodes (a 3-D convolution's depth taps,
//     slices of one input): else it would trade one cast for several, and
//     the pass runs again without it.
// O2: everything not F32-BLACK by rule 1 is L. O3: everything but the loss.
#include "passes/AmpDecision.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "ops/GraphNames.h"

using namespace mlir;

namespace ampc::amp {

using graph::AmpCategory;

static StringRef opMnemonic(Operation *op) {
  return op->getName().getStringRef().drop_front(strlen("graph."));
}

FailureOr<AmpConfig> makeConfig(graph::GraphOp g, StringRef level, StringRef dtype,
                                const AmpLists &lists) {
  AmpConfig config;
  MLIRContext *ctx = g.getContext();
  static const char *levels[] = {"O0", "O1", "O2", "O3"};
  auto lvl = llvm::find(levels, level);
  if (lvl == std::end(levels))
    return g.emitError("level must be O0, O1, O2 or O3, got '") << level << "'";
  config.level = static_cast<Level>(lvl - std::begin(levels));
  if (dtype == "f16")
    config.low = Float16Type::get(ctx);
  else if (dtype == "bf16" || dtype == "fp8") // fp8: bf16, and graph-fp8 for the GEMMs
    config.low = BFloat16Type::get(ctx);
  else
    return g.emitError("dtype must be f16, bf16 or fp8, got '") << dtype << "'";

  struct ListSpec {
    const std::vector<std::string> &names;
    AmpCategory category;
    const char *key;
  };
  llvm::StringMap<const char *> seenIn;
  for (const ListSpec &list : {ListSpec{lists.white, AmpCategory::White, "custom_white_list"},
                               ListSpec{lists.black, AmpCategory::Black, "custom_black_list"},
                               ListSpec{lists.gray, AmpCategory::Gray, "custom_gray_list"}}) {
    for (const std::string &name : list.names) {
      auto opName = RegisteredOperationName::lookup("graph." + name, ctx);
      auto *iface = opName ? opName->getInterface<graph::AmpOpInterface>() : nullptr;
      if (!iface)
        return g.emitError(list.key) << ": unknown op '" << name << "'";
      if (iface->getDefaultAmpCategory() == AmpCategory::None)
        return g.emitError(list.key) << ": op '" << name << "' is on no AMP list and cannot be moved";
      auto [it, fresh] = seenIn.try_emplace(name, list.key);
      if (!fresh && StringRef(it->second) != list.key)
        return g.emitError("op '") << name << "' is in both " << it->second << " and "
                                   << list.key;
      config.categoryOverride[name] = list.category;
    }
  }
  llvm::StringSet<> values;
  g.walk([&](Operation *op) {
    for (Value v : op->getResults())
      values.insert(graph::valueName(v));
  });
  for (const std::string &name : lists.blackVarnames) {
    if (!values.contains(name))
      return g.emitError("custom_black_varnames: '") << name << "' names no value";
    config.blackVarnames.insert(name);
  }
  return config;
}

AmpCategory categoryOf(Operation *op, const AmpConfig &config) {
  auto it = config.categoryOverride.find(opMnemonic(op));
  if (it != config.categoryOverride.end())
    return it->second;
  if (auto iface = dyn_cast<graph::AmpOpInterface>(op))
    return iface.getDefaultAmpCategory();
  return AmpCategory::None;
}

bool keepsOperandF32(Operation *op, unsigned index) {
  auto iface = dyn_cast<graph::AmpOpInterface>(op);
  return iface && iface.keepsOperandF32(index);
}

bool widensOperand(Operation *op, unsigned index) {
  auto iface = dyn_cast<graph::AmpOpInterface>(op);
  return iface && iface.widensOperand(index);
}

std::vector<Operation *> graphNodes(graph::GraphOp g) {
  std::vector<Operation *> nodes;
  for (Operation &op : g.getBody().front())
    if (!graph::isValueOp(&op) && !isa<graph::ReturnOp>(op))
      nodes.push_back(&op);
  return nodes;
}

namespace {

bool isFloat(Value v) { return graph::isFloatTensor(v.getType()); }

bool touchesBlackVarname(Operation *op, const AmpConfig &config) {
  auto named = [&](Value v) { return config.blackVarnames.contains(graph::valueName(v)); };
  return llvm::any_of(op->getOperands(), named) || llvm::any_of(op->getResults(), named);
}

bool feedsGraphOutput(Operation *op) {
  for (Value r : op->getResults())
    for (Operation *user : r.getUsers())
      if (isa<graph::ReturnOp>(user))
        return true;
  return false;
}

/// Rule 4's test: every use of the node's results is by an L consumer in a
/// slot that takes L.
bool onlyLowConsumers(Operation *op, const Decisions &d) {
  bool anyUse = false;
  for (Value r : op->getResults())
    for (OpOperand &use : r.getUses()) {
      anyUse = true;
      Operation *user = use.getOwner();
      auto it = d.find(user);
      if (it == d.end() || it->second != Precision::Low ||
          keepsOperandF32(user, use.getOperandNumber()))
        return false;
    }
  return anyUse;
}

/// The values that get a cast because rule 4 moved `op` (decided Neutral
/// by rules 1-3, Low after rule 4): its float operands, followed upstream
/// through the nodes rule 4 moved as well. An operand made by an L node needs
/// none, nor does a fill read only there (graph-fold-casts makes it an L fill:
/// the zeros a convolution pads with).
llvm::SmallPtrSet<void *, 4> castSources(Operation *op, const Decisions &before,
                                         const Decisions &after) {
  llvm::SmallPtrSet<void *, 4> sources;
  llvm::SmallPtrSet<Operation *, 8> seen{op};
  llvm::SmallVector<Operation *> todo{op};
  while (!todo.empty()) {
    Operation *at = todo.pop_back_val();
    for (Value v : at->getOperands()) {
      if (!isFloat(v))
        continue;
      Operation *def = v.getDefiningOp();
      if (def && isa<graph::FillOp>(def) && def->hasOneUse())
        continue;
      auto b = def ? before.find(def) : before.end();
      auto a = def ? after.find(def) : after.end();
      if (b != before.end() && b->second == Precision::Low)
        continue;
      bool movedToo = b != before.end() && a != after.end() &&
                      b->second == Precision::Neutral && a->second == Precision::Low;
      if (!movedToo)
        sources.insert(v.getAsOpaquePointer());
      else if (seen.insert(def).second)
        todo.push_back(def);
    }
  }
  return sources;
}

} // namespace

Decisions decide(graph::GraphOp g, const AmpConfig &config) {
  Decisions d;
  std::optional<StringRef> loss = g.getLoss();
  std::vector<Operation *> nodes = graphNodes(g);
  auto producer = [&](Value v) -> std::optional<Precision> {
    Operation *def = v.getDefiningOp();
    if (!def || graph::isValueOp(def))
      return std::nullopt;
    return d.lookup(def);
  };
  auto decideOne = [&](Operation *op) {
    if (auto cast = dyn_cast<graph::CastOp>(op))
      return graph::elementType(cast.getType()) == config.low ? Precision::Low
                                                               : Precision::Neutral;
    if (isa<graph::ConstantOp, graph::FillOp, graph::Fp8QuantizeOp, graph::Fp8MatmulOp>(op))
      return Precision::Neutral;
    if (loss && llvm::any_of(op->getResults(),
                             [&](Value r) { return graph::valueName(r) == *loss; }))
      return Precision::Black;
    if (config.level == Level::O3)
      return Precision::Low;
    AmpCategory category = categoryOf(op, config);
    if (category == AmpCategory::Black || category == AmpCategory::None ||
        touchesBlackVarname(op, config))
      return Precision::Black;
    if (config.level == Level::O2 || category == AmpCategory::White)
      return Precision::Low;
    bool black = false, low = false;
    for (Value v : op->getOperands()) {
      if (!isFloat(v))
        continue;
      std::optional<Precision> p = producer(v);
      black |= p == Precision::Black;
      low |= p == Precision::Low;
    }
    return black ? Precision::Black : low ? Precision::Low : Precision::Neutral;
  };
  for (Operation *op : nodes)
    d[op] = decideOne(op);

  if (config.level != Level::O1 || !config.moveCastsUpstream)
    return d;
  // Rule 4, run again without each node of several inputs that it moved
  // onto more than one value (where one cast would become several).
  llvm::DenseSet<Operation *> refused;
  while (true) {
    Decisions moved = d;
    for (Operation *op : llvm::reverse(nodes)) {
      auto iface = dyn_cast<graph::AmpOpInterface>(op);
      if (moved[op] != Precision::Neutral || !iface || !iface.isPrecisionAgnostic() ||
          categoryOf(op, config) != AmpCategory::Gray || refused.contains(op))
        continue;
      if (llvm::count_if(op->getOperands(), isFloat) == 0 ||
          !llvm::all_of(op->getResults(), isFloat) || feedsGraphOutput(op))
        continue;
      if (onlyLowConsumers(op, moved))
        moved[op] = Precision::Low;
    }
    Operation *spread = nullptr;
    for (Operation *op : nodes)
      if (moved[op] == Precision::Low && d[op] == Precision::Neutral &&
          llvm::count_if(op->getOperands(), isFloat) > 1 &&
          castSources(op, d, moved).size() > 1)
        spread = op;
    if (!spread)
      return moved;
    refused.insert(spread);
  }
}

} // namespace ampc::amp
