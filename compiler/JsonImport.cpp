// Reads a JSON v1 saved graph into the `graph` dialect.
//
// Algorithm: check the header; read `values` (declared dtype/shape, kind) and
// `nodes`; map every value name to its producer; order the nodes
// topologically (Kahn's algorithm, ties in file order, so a graph written in
// topological order keeps its order); create the input/param/const values in
// file order, then each node through createNode, which infers and verifies its
// result types; compare them with the declared ones; end with the outputs.
#include "compiler/Diagnostics.h"
#include "compiler/GraphJson.h"
#include "compiler/NodeFactory.h"
#include "compiler/DenseData.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/Verifier.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/Version.h"

#include <deque>

using namespace mlir;

namespace ampc {
namespace {

std::string typeString(Type type) {
  auto t = cast<RankedTensorType>(type);
  std::string s = graph::dtypeName(t.getElementType()) + "[";
  for (int64_t i = 0; i < t.getRank(); ++i)
    s += (i ? "," : "") + std::to_string(t.getDimSize(i));
  return s + "]";
}

struct ValueDecl {
  std::string name, kind;
  const Json *json;
  RankedTensorType type; // null when dtype/shape are not declared
};

struct NodeDecl {
  std::string name, op;
  std::vector<std::string> inputs, outputs;
  const Json *attrs;
};

const Json &field(const Json &obj, const char *key, const std::string &where,
                  bool (Json::*is)() const noexcept, const char *what) {
  if (!obj.contains(key) || !(obj[key].*is)())
    throw GraphError(where + ": needs \"" + key + "\" as " + what);
  return obj[key];
}

std::vector<std::string> nameList(const Json &obj, const char *key,
                                  const std::string &where) {
  std::vector<std::string> names;
  for (const Json &n : field(obj, key, where, &Json::is_array, "a list of names")) {
    if (!n.is_string())
      throw GraphError(where + ": \"" + key + "\" must hold names (strings)");
    names.push_back(n.get<std::string>());
  }
  return names;
}

class Importer {
public:
  Importer(MLIRContext &ctx, const Json &root) : ctx_(ctx), root_(root), b_(&ctx) {}
  OwningOpRef<ModuleOp> run();

private:
  void readValues();
  void readNodes();
  std::vector<const NodeDecl *> topologicalOrder();
  void createValue(const ValueDecl &v);
  void createNode(const NodeDecl &n);
  DictionaryAttr readModelRecord(const Json &model);

  MLIRContext &ctx_;
  const Json &root_;
  OpBuilder b_;
  std::vector<ValueDecl> values_;
  llvm::StringMap<size_t> valueIndex_;
  std::vector<NodeDecl> nodes_;
  llvm::StringMap<size_t> producer_; // value name -> node index
  llvm::StringMap<Value> defined_;
};

/// The zoo's record of how it built the graph: {"name": ..., "args": {k: "v"}}.
DictionaryAttr Importer::readModelRecord(const Json &model) {
  const char *shape = "\"model\" must be {\"name\": string, \"args\": {key: string}}";
  if (!model.is_object() || model.size() != 2 || !model.contains("name") ||
      !model["name"].is_string() || !model.contains("args") || !model["args"].is_object())
    throw GraphError(shape);
  SmallVector<NamedAttribute> args;
  for (const auto &[key, value] : model["args"].items()) {
    if (!value.is_string())
      throw GraphError(std::string(shape) + "; arg '" + key + "' is not a string");
    args.push_back(b_.getNamedAttr(key, b_.getStringAttr(value.get<std::string>())));
  }
  return b_.getDictionaryAttr(
      {b_.getNamedAttr("name", b_.getStringAttr(model["name"].get<std::string>())),
       b_.getNamedAttr("args", b_.getDictionaryAttr(args))});
}

void Importer::readValues() {
  for (const Json &v : field(root_, "values", "graph", &Json::is_array, "a list")) {
    if (!v.is_object() || !v.contains("name") || !v["name"].is_string())
      throw GraphError("values: every value needs a \"name\"");
    ValueDecl d{v["name"].get<std::string>(), "", &v, nullptr};
    std::string where = "value '" + d.name + "'";
    if (v.contains("kind")) {
      d.kind = field(v, "kind", where, &Json::is_string, "a string").get<std::string>();
      if (d.kind != "input" && d.kind != "param" && d.kind != "const")
        throw GraphError(where + ": kind must be input, param or const, got '" + d.kind + "'");
    }
    if (v.contains("dtype") || v.contains("shape") || !d.kind.empty()) {
      std::string dtype =
          field(v, "dtype", where, &Json::is_string, "a dtype name").get<std::string>();
      Type element = graph::parseDtype(&ctx_, dtype);
      if (!element)
        throw GraphError(where + ": unknown dtype '" + dtype + "'");
      std::vector<int64_t> shape;
      for (const Json &dim : field(v, "shape", where, &Json::is_array, "a list")) {
        if (!dim.is_number_integer() || dim.get<int64_t>() < 0)
          throw GraphError(where + ": shape entries must be non-negative integers");
        shape.push_back(dim.get<int64_t>());
      }
      d.type = RankedTensorType::get(shape, element);
    }
    if (!valueIndex_.try_emplace(d.name, values_.size()).second)
      throw GraphError(where + ": duplicate value name");
    values_.push_back(d);
  }
}

void Importer::readNodes() {
  llvm::StringSet<> names;
  for (const Json &n : field(root_, "nodes", "graph", &Json::is_array, "a list")) {
    if (!n.is_object() || !n.contains("name") || !n["name"].is_string())
      throw GraphError("nodes: every node needs a \"name\"");
    NodeDecl d;
    d.name = n["name"].get<std::string>();
    std::string where = "node '" + d.name + "'";
    if (!names.insert(d.name).second)
      throw GraphError(where + ": duplicate node name");
    d.op = field(n, "op", where, &Json::is_string, "a string").get<std::string>();
    if (!isKnownOp(&ctx_, d.op) || d.op == "graph" || d.op == "return" ||
        d.op == "input" || d.op == "param" || d.op == "const")
      throw GraphError(where + ": unknown op '" + d.op + "'");
    d.inputs = nameList(n, "inputs", where);
    d.outputs = nameList(n, "outputs", where);
    if (d.outputs.empty())
      throw GraphError(where + ": needs at least one output");
    static const Json empty = Json::object();
    d.attrs = n.contains("attrs") ? &n["attrs"] : &empty;
    if (!d.attrs->is_object())
      throw GraphError(where + ": \"attrs\" must be an object");
    for (const std::string &out : d.outputs) {
      auto it = valueIndex_.find(out);
      if (it != valueIndex_.end() && !values_[it->second].kind.empty())
        throw GraphError(where + ": output '" + out + "' is a graph " +
                         values_[it->second].kind + " and cannot be produced by a node");
      auto [prev, fresh] = producer_.try_emplace(out, nodes_.size());
      if (!fresh && prev->second == nodes_.size())
        throw GraphError(where + ": lists output '" + out + "' twice");
      if (!fresh)
        throw GraphError("value '" + out + "' has two producers: nodes '" +
                         nodes_[prev->second].name + "' and '" + d.name + "'");
    }
    nodes_.push_back(std::move(d));
  }
  for (const ValueDecl &v : values_)
    if (v.kind.empty() && !producer_.count(v.name))
      throw GraphError("value '" + v.name + "': no kind and no node produces it");
}

std::vector<const NodeDecl *> Importer::topologicalOrder() {
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i)
    for (const std::string &in : nodes_[i].inputs) {
      auto p = producer_.find(in);
      if (p != producer_.end()) {
        ++pending[i];
        consumers[p->second].push_back(i);
      } else if (!valueIndex_.count(in)) {
        throw GraphError("node '" + nodes_[i].name + "': input '" + in +
                         "' names no value");
      }
    }
  // Ready nodes are taken in file order: a min-heap by index.
  std::vector<size_t> ready;
  auto later = [](size_t a, size_t b) { return a > b; };
  for (size_t i = 0; i < nodes_.size(); ++i)
    if (!pending[i])
      ready.push_back(i);
  std::make_heap(ready.begin(), ready.end(), later);
  std::vector<const NodeDecl *> order;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), later);
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(&nodes_[i]);
    for (size_t c : consumers[i])
      if (--pending[c] == 0) {
        ready.push_back(c);
        std::push_heap(ready.begin(), ready.end(), later);
      }
  }
  if (order.size() != nodes_.size()) {
    std::string cycle;
    for (size_t i = 0, shown = 0; i < nodes_.size() && shown < 4; ++i)
      if (pending[i]) {
        cycle += (shown++ ? ", '" : "'") + nodes_[i].name + "'";
      }
    throw GraphError("the graph has a cycle through nodes " + cycle);
  }
  return order;
}

void Importer::createValue(const ValueDecl &v) {
  Location loc = NameLoc::get(b_.getStringAttr("value '" + v.name + "'"));
  std::string where = "value '" + v.name + "'";
  Operation *op;
  if (v.kind == "input") {
    op = b_.create<graph::InputOp>(loc, v.type, v.name);
  } else if (v.kind == "param") {
    DictionaryAttr init;
    if (v.json->contains("init")) {
      try {
        init = initFromJson(&ctx_, (*v.json)["init"], v.type.getShape());
      } catch (const GraphError &e) {
        throw GraphError(where + ": " + e.what());
      }
    }
    BoolAttr trainable;
    if (v.json->contains("trainable"))
      trainable = b_.getBoolAttr(
          field(*v.json, "trainable", where, &Json::is_boolean, "true or false").get<bool>());
    TypeAttr master;
    if (v.json->contains("master_dtype")) {
      std::string name = field(*v.json, "master_dtype", where, &Json::is_string, "a dtype name")
                             .get<std::string>();
      Type t = graph::parseDtype(&ctx_, name);
      if (!t || !isa<FloatType>(t))
        throw GraphError(where + ": master_dtype must be a float dtype, got '" + name + "'");
      master = TypeAttr::get(t);
    }
    op = b_.create<graph::ParamOp>(loc, v.type, b_.getStringAttr(v.name), init, trainable,
                                   master, nullptr);
  } else {
    std::vector<double> data;
    for (const Json &x : field(*v.json, "data", where, &Json::is_array, "a list")) {
      std::optional<double> e = rt::tensorElementFromJson(x);
      if (!e)
        throw GraphError(where + ": data entries must be numbers, or \"inf\", \"-inf\" or "
                                 "\"nan\"");
      data.push_back(*e);
    }
    if ((int64_t)data.size() != v.type.getNumElements())
      throw GraphError(where + ": data has " + std::to_string(data.size()) +
                       " elements, the shape needs " + std::to_string(v.type.getNumElements()));
    op = b_.create<graph::ConstOp>(loc, v.type, v.name, denseFromDoubles(v.type, data));
  }
  ErrorCollector errors(&ctx_);
  if (failed(verify(op)))
    errors.raise(where + ": invalid " + v.kind);
  defined_[v.name] = op->getResult(0);
}

void Importer::createNode(const NodeDecl &n) {
  std::string where = "node '" + n.name + "'";
  SmallVector<Value> operands;
  for (const std::string &in : n.inputs)
    operands.push_back(defined_.lookup(in));
  NamedAttrList attrs;
  for (auto it = n.attrs->begin(); it != n.attrs->end(); ++it) {
    if (it.key() == "name" || it.key() == "outs")
      throw GraphError(where + ": attribute '" + it.key() + "' is reserved");
    try {
      attrs.set(it.key(), attrFromJson(&ctx_, it.key(), it.value()));
    } catch (const GraphError &e) {
      throw GraphError(where + ": " + e.what());
    }
  }
  if (n.outputs.size() != 1 || n.outputs[0] != n.name) {
    SmallVector<Attribute> outs;
    for (const std::string &o : n.outputs)
      outs.push_back(b_.getStringAttr(o));
    attrs.set("outs", b_.getArrayAttr(outs));
  }
  SmallVector<Type> declared;
  for (const std::string &o : n.outputs) {
    auto it = valueIndex_.find(o);
    if (it != valueIndex_.end() && values_[it->second].type)
      declared.push_back(values_[it->second].type);
  }
  bool allDeclared = declared.size() == n.outputs.size();
  Operation *op = ampc::createNode(b_, n.op, n.name, operands, attrs,
                                   allDeclared ? TypeRange(declared) : TypeRange());
  if (op->getNumResults() != n.outputs.size())
    throw GraphError(where + ": '" + n.op + "' has " + std::to_string(op->getNumResults()) +
                     " outputs, the node lists " + std::to_string(n.outputs.size()));
  for (size_t i = 0; i < n.outputs.size(); ++i) {
    Type inferred = op->getResult(i).getType();
    auto it = valueIndex_.find(n.outputs[i]);
    if (it != valueIndex_.end() && values_[it->second].type &&
        values_[it->second].type != inferred)
      throw GraphError("value '" + n.outputs[i] + "': declared " +
                       typeString(values_[it->second].type) + " but node '" + n.name +
                       "' computes " + typeString(inferred));
    defined_[n.outputs[i]] = op->getResult(i);
  }
}

OwningOpRef<ModuleOp> Importer::run() {
  if (!root_.is_object())
    throw GraphError("the file is not a JSON object");
  if (!root_.contains("format") || root_["format"] != "ampc.graph")
    throw GraphError("not an ampc graph: \"format\" must be \"ampc.graph\"");
  if (!root_.contains("version") || root_["version"] != kGraphFormatVersion)
    throw GraphError("unsupported graph version " +
                     (root_.contains("version") ? rt::dumpJson(root_["version"]) : "(none)") +
                     "; this ampc reads version " + std::to_string(kGraphFormatVersion));
  std::string name = root_.contains("name") && root_["name"].is_string()
                         ? root_["name"].get<std::string>()
                         : "graph";
  readValues();
  readNodes();
  std::vector<const NodeDecl *> order = topologicalOrder();

  OwningOpRef<ModuleOp> module = ModuleOp::create(UnknownLoc::get(&ctx_));
  b_.setInsertionPointToEnd(module->getBody());
  auto g = b_.create<graph::GraphOp>(UnknownLoc::get(&ctx_), b_.getStringAttr(name),
                                     nullptr, nullptr);
  b_.setInsertionPointToEnd(&g.getBody().emplaceBlock());
  for (const ValueDecl &v : values_)
    if (!v.kind.empty())
      createValue(v);
  for (const NodeDecl *n : order)
    createNode(*n);

  SmallVector<Value> outputs;
  for (const std::string &o : nameList(root_, "outputs", "graph")) {
    Value v = defined_.lookup(o);
    if (!v)
      throw GraphError("output '" + o + "' names no value");
    outputs.push_back(v);
  }
  b_.create<graph::ReturnOp>(UnknownLoc::get(&ctx_), outputs);
  if (root_.contains("loss") && !root_["loss"].is_null()) {
    if (!root_["loss"].is_string())
      throw GraphError("\"loss\" must be a value name");
    std::string loss = root_["loss"].get<std::string>();
    Value v = defined_.lookup(loss);
    if (!v)
      throw GraphError("loss '" + loss + "' names no value");
    if (!llvm::is_contained(outputs, v))
      throw GraphError("loss '" + loss + "' is not listed in \"outputs\"");
    g.setLoss(loss);
  }
  if (root_.contains("model") && !root_["model"].is_null())
    g.setModelAttr(readModelRecord(root_["model"]));
  ErrorCollector errors(&ctx_);
  if (failed(verify(*module)))
    errors.raise("the graph does not verify");
  return module;
}

} // namespace

OwningOpRef<ModuleOp> importGraphJson(MLIRContext &ctx, StringRef text) {
  std::string error;
  std::optional<Json> root = rt::parseJson(std::string_view(text.data(), text.size()), error);
  if (!root)
    throw GraphError(error);
  try {
    return Importer(ctx, *root).run();
  } catch (const Json::exception &e) {
    throw GraphError(std::string("unexpected JSON content: ") + e.what());
  }
}

} // namespace ampc
