#include "compiler/GraphBuilder.h"

#include "compiler/DenseData.h"
#include "compiler/Diagnostics.h"
#include "compiler/NodeFactory.h"
#include "mlir/IR/Verifier.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc {

void loadDialects(MLIRContext &ctx) { ctx.getOrLoadDialect<graph::GraphDialect>(); }

ArrayRef<int64_t> Tensor::shape() const {
  return cast<RankedTensorType>(value_.getType()).getShape();
}

int64_t Tensor::dim(int64_t i) const {
  auto s = shape();
  int64_t at = i < 0 ? i + (int64_t)s.size() : i;
  if (at < 0 || at >= (int64_t)s.size())
    throw GraphError("value '" + name().str() + "': it has no dimension " + std::to_string(i) +
                     " (rank " + std::to_string(s.size()) + ")");
  return s[at];
}

std::string Tensor::dtype() const { return graph::dtypeName(graph::elementType(value_.getType())); }

StringRef Tensor::name() const { return graph::valueName(value_); }

GraphBuilder::GraphBuilder(MLIRContext &ctx, StringRef graphName)
    : module_(ModuleOp::create(UnknownLoc::get(&ctx))), builder_(&ctx) {
  loadDialects(ctx);
  builder_.setInsertionPointToEnd(module_->getBody());
  auto g = builder_.create<graph::GraphOp>(UnknownLoc::get(&ctx),
                                           builder_.getStringAttr(graphName), nullptr,
                                           nullptr);
  g.getBody().emplaceBlock();
  graph_ = g;
  builder_.setInsertionPointToEnd(&g.getBody().front());
}

GraphBuilder::Scope GraphBuilder::scope(StringRef name) {
  scopes_.push_back(name.str());
  return Scope(this);
}

std::string GraphBuilder::qualify(StringRef local) const {
  std::string s;
  for (const std::string &scope : scopes_)
    s += scope + ".";
  return s + local.str();
}

/// Names (nodes and values) a graph may have: over forty times the largest
/// models' (a 70B LLaMA's are about 6,000). A size past it (layers=10^8) is
/// a mistake to name, not hours of building.
constexpr size_t kMaxGraphNames = size_t(1) << 18;

static void checkGraphSize(const llvm::StringSet<> &used) {
  if (used.size() >= kMaxGraphNames)
    throw GraphError("the graph passes " + std::to_string(kMaxGraphNames) +
                     " nodes and values: check the sizes given (layers, blocks)");
}

std::string GraphBuilder::uniqueName(StringRef local) {
  checkGraphSize(used_);
  std::string base = qualify(local), name = base;
  // Suffixes go on from the last one taken: n nodes of one name cost n steps.
  for (int &i = nextSuffix_[base]; used_.contains(name);)
    name = base + "_" + std::to_string(++i);
  used_.insert(name);
  return name;
}

std::string GraphBuilder::valueName(StringRef name) {
  checkGraphSize(used_);
  std::string full = qualify(name);
  if (!used_.insert(full).second)
    throw GraphError("value '" + full + "': the name is already taken");
  return full;
}

RankedTensorType GraphBuilder::tensorType(ArrayRef<int64_t> shape, StringRef dtype) {
  Type element = graph::parseDtype(&context(), dtype);
  if (!element)
    throw GraphError("unknown dtype '" + dtype.str() + "'");
  for (int64_t d : shape)
    if (d < 0)
      throw GraphError("shapes must be static and non-negative");
  return RankedTensorType::get(shape, element);
}

template <typename OpT, typename... Args>
OpT GraphBuilder::createValueOp(Args &&...args) {
  OpBuilder::InsertionGuard guard(builder_);
  Block &body = llvm::cast<graph::GraphOp>(graph_).getBody().front();
  if (lastValueOp_)
    builder_.setInsertionPointAfter(lastValueOp_);
  else
    builder_.setInsertionPointToStart(&body);
  OpT op = builder_.create<OpT>(std::forward<Args>(args)...);
  lastValueOp_ = op;
  return op;
}

static Location valueLoc(OpBuilder &b, StringRef name) {
  return NameLoc::get(b.getStringAttr("value '" + name.str() + "'"));
}

Tensor GraphBuilder::input(StringRef name, ArrayRef<int64_t> shape, StringRef dtype) {
  std::string full = valueName(name);
  return Tensor(createValueOp<graph::InputOp>(valueLoc(builder_, full),
                                                tensorType(shape, dtype), full));
}

Tensor GraphBuilder::param(StringRef name, ArrayRef<int64_t> shape, const Init &init,
                           StringRef dtype, bool trainable) {
  std::string full = valueName(name);
  NamedAttrList fields;
  fields.set("kind", builder_.getStringAttr(init.kind));
  for (auto &[key, v] : init.fields)
    fields.set(key, builder_.getF64FloatAttr(v));
  if (init.kind == "data") {
    RankedTensorType type = tensorType(shape, "f32");
    if ((int64_t)init.data.size() != type.getNumElements())
      throw GraphError("value '" + full + "': init data has " +
                       std::to_string(init.data.size()) + " elements, the shape needs " +
                       std::to_string(type.getNumElements()));
    fields.set("data", denseFromDoubles(type, init.data));
  }
  auto op = createValueOp<graph::ParamOp>(
      valueLoc(builder_, full), tensorType(shape, dtype), builder_.getStringAttr(full),
      fields.getDictionary(&context()), trainable ? nullptr : builder_.getBoolAttr(false),
      /*master_dtype=*/nullptr, /*copy_of=*/nullptr);
  ErrorCollector errors(&context());
  if (failed(verify(op)))
    errors.raise("value '" + full + "': invalid param");
  return Tensor(op);
}

Tensor GraphBuilder::constValue(StringRef name, ArrayRef<int64_t> shape,
                                ArrayRef<double> data, StringRef dtype) {
  std::string full = valueName(name);
  RankedTensorType type = tensorType(shape, dtype);
  if ((int64_t)data.size() != type.getNumElements())
    throw GraphError("value '" + full + "': data has " + std::to_string(data.size()) +
                     " elements, the shape needs " + std::to_string(type.getNumElements()));
  return Tensor(createValueOp<graph::ConstOp>(valueLoc(builder_, full), type, full,
                                                denseFromDoubles(type, data)));
}

Tensor GraphBuilder::node(StringRef op, ArrayRef<Tensor> inputs, NamedAttrList attrs,
                          StringRef name, TypeRange resultTypes) {
  SmallVector<Value> operands;
  for (const Tensor &t : inputs) {
    if (!t)
      throw GraphError("node '" + qualify(name.empty() ? op : name) +
                       "': an input is an empty tensor handle");
    operands.push_back(t.value());
  }
  std::string full = uniqueName(name.empty() ? op : name);
  return Tensor(createNode(builder_, op, full, operands, attrs, resultTypes)->getResult(0));
}

void GraphBuilder::output(Tensor t) {
  if (!llvm::is_contained(outputs_, t.value()))
    outputs_.push_back(t.value());
}

void GraphBuilder::setLoss(Tensor t) {
  output(t);
  loss_ = t.name().str();
}

OwningOpRef<ModuleOp> GraphBuilder::finish() {
  builder_.create<graph::ReturnOp>(UnknownLoc::get(&context()), outputs_);
  if (!loss_.empty())
    llvm::cast<graph::GraphOp>(graph_).setLoss(loss_);
  ErrorCollector errors(&context());
  if (failed(verify(*module_)))
    errors.raise("the graph does not verify");
  return std::move(module_);
}

} // namespace ampc
