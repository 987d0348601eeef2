// The ONNX importer's driver: reads the ModelProto, refuses it whole when an
// op cannot be mapped (listing every such op), fixes dynamic dimensions,
// then maps the nodes in their (topological) file order. See docs/onnx.md.
#include "compiler/onnx/OnnxImport.h"

#include "compiler/onnx/OnnxImporter.h"
#include "llvm/ADT/DenseSet.h"
#include "onnx/defs/schema.h"
#include "compiler/Diagnostics.h"
#include "compiler/NodeFactory.h"
#include "ops/GraphNames.h"
#include "ops/InferenceUtils.h"

namespace ampc {
namespace onnx_import {

using onnx::NodeProto;

GraphError Importer::fail(const NodeProto &node, const std::string &what) const {
  return GraphError("node '" + nodeName(node) + "' (" + node.op_type() + "): " + what);
}

std::string Importer::nodeName(const NodeProto &node) const {
  auto it = names.find(&node);
  return it != names.end() ? it->second : node.name();
}

const HostTensor *Importer::constant(const std::string &name) {
  auto it = known.find(name);
  if (it != known.end())
    return &it->second;
  auto init = initializers.find(name);
  if (init == initializers.end())
    return nullptr;
  return &(known[name] = readTensor(*init->second, "initializer '" + name + "'"));
}

std::optional<std::string> Importer::dtypeOfValue(const std::string &name) {
  if (auto it = tensors.find(name); it != tensors.end())
    return it->second.dtype();
  if (auto it = known.find(name); it != known.end())
    return it->second.dtype;
  if (auto init = initializers.find(name); init != initializers.end())
    return dtypeOf(init->second->data_type()); // without reading the values
  return std::nullopt;
}

Tensor Importer::tensor(const std::string &name) {
  auto it = tensors.find(name);
  if (it != tensors.end())
    return it->second;
  const HostTensor *value = constant(name);
  if (!value)
    throw GraphError("value '" + name + "' is used before any node makes it");
  Tensor t;
  bool isFloat = !isIntegerDtype(value->dtype);
  if (initializers.count(name) && isFloat)
    t = b.param(name, value->shape, Init::values(value->data), value->dtype,
                !statistics.count(name));
  else
    t = b.constValue(name, value->shape, value->data, value->dtype);
  return tensors[name] = t;
}

Tensor Importer::optionalInput(const NodeProto &node, int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return Tensor();
  return input(node, i);
}

Tensor Importer::input(const NodeProto &node, int i) {
  if (i >= node.input_size() || node.input(i).empty())
    throw fail(node, "input " + std::to_string(i) + " is missing");
  const std::string &name = node.input(i);
  if (!tensors.count(name) && !known.count(name) && !initializers.count(name))
    throw fail(node, "input '" + name +
                         "' is no graph input, initializer or output of an earlier node");
  return tensor(name);
}

const HostTensor *Importer::constantInput(const NodeProto &node, int i) {
  if (i >= node.input_size() || node.input(i).empty())
    return nullptr;
  return constant(node.input(i));
}

std::vector<int64_t> Importer::intsInput(const NodeProto &node, int i) {
  const HostTensor *t = constantInput(node, i);
  if (!t)
    throw fail(node, "input " + std::to_string(i) +
                         " must be a constant known at import time");
  return toInt64(t->data);
}

Tensor Importer::emit(const NodeProto &node, llvm::StringRef op, llvm::ArrayRef<Tensor> inputs,
                      mlir::NamedAttrList attrs, const std::string &out,
                      llvm::StringRef suffix, mlir::TypeRange resultTypes) {
  std::string name = nodeName(node) + (suffix.empty() ? "" : "." + suffix.str());
  for (int n = 1; !usedNodeNames_.insert(name).second; ++n)
    name = nodeName(node) + "." + (suffix.empty() ? "" : suffix.str() + ".") + std::to_string(n);
  llvm::SmallVector<mlir::Value> operands;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i])
      throw fail(node, "input " + std::to_string(i) + " is missing");
    operands.push_back(inputs[i].value());
  }
  mlir::OpBuilder &ob = b.opBuilder();
  attrs.set("outs", ob.getArrayAttr({ob.getStringAttr(out)}));
  mlir::Operation *created = createNode(ob, op, name, operands, attrs, resultTypes);
  return tensors[out] = Tensor(created->getResult(0));
}

Tensor Importer::fill(const NodeProto &node, llvm::ArrayRef<int64_t> shape, double value,
                      Tensor like, llvm::StringRef suffix) {
  mlir::Type element = mlir::cast<mlir::ShapedType>(like.value().getType()).getElementType();
  mlir::NamedAttrList a;
  a.set("value", b.opBuilder().getF64FloatAttr(value));
  std::string out = nodeName(node) + "." + suffix.str();
  for (int n = 1; tensors.count(out); ++n) // a mapping that fills twice alike
    out = nodeName(node) + "." + suffix.str() + "." + std::to_string(n);
  return emit(node, "fill", {}, a, out, suffix, {mlir::RankedTensorType::get(shape, element)});
}

Tensor Importer::emit(const NodeProto &node, llvm::StringRef op, llvm::ArrayRef<Tensor> inputs,
                      mlir::NamedAttrList attrs) {
  if (node.output_size() < 1 || node.output(0).empty())
    throw fail(node, "has no output");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      throw fail(node, "its output " + std::to_string(i) + " ('" + node.output(i) +
                           "') is not supported");
  return emit(node, op, inputs, attrs, node.output(0));
}

void Importer::alias(const NodeProto &node, Tensor t) {
  if (graphOutputs.count(node.output(0)))
    emit(node, "identity", {t});
  else
    tensors[node.output(0)] = t;
}

const onnx::AttributeProto *Importer::attr(const NodeProto &node, const char *key) const {
  for (const onnx::AttributeProto &a : node.attribute())
    if (a.name() == key)
      return &a;
  return nullptr;
}

int64_t Importer::attrInt(const NodeProto &node, const char *key, int64_t fallback) const {
  const onnx::AttributeProto *a = attr(node, key);
  return a ? a->i() : fallback;
}

double Importer::attrFloat(const NodeProto &node, const char *key, double fallback) const {
  const onnx::AttributeProto *a = attr(node, key);
  return a ? a->f() : fallback;
}

std::string Importer::attrString(const NodeProto &node, const char *key,
                                 const std::string &fallback) const {
  const onnx::AttributeProto *a = attr(node, key);
  return a ? a->s() : fallback;
}

std::optional<std::vector<int64_t>> Importer::attrInts(const NodeProto &node,
                                                       const char *key) const {
  const onnx::AttributeProto *a = attr(node, key);
  if (!a)
    return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

int64_t normalizeAxis(Importer &im, const NodeProto &node, int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank)
    throw im.fail(node, "axis " + std::to_string(axis) + " is out of range for rank " +
                            std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

/// The dtype and fixed shape of a graph input.
static std::pair<std::string, std::vector<int64_t>>
inputType(const onnx::ValueInfoProto &v, const OnnxImportOptions &options) {
  std::string where = "input '" + v.name() + "'";
  if (!v.type().has_tensor_type())
    throw GraphError(where + ": only tensor inputs are supported");
  const onnx::TypeProto::Tensor &t = v.type().tensor_type();
  std::optional<std::string> dtype = dtypeOf(t.elem_type());
  if (!dtype)
    throw GraphError(where + ": ONNX data type " + std::to_string(t.elem_type()) +
                     " is not supported");
  std::vector<int64_t> shape;
  if (!t.has_shape())
    throw GraphError(where + ": the model gives no shape");
  for (int i = 0; i < t.shape().dim_size(); ++i) {
    const onnx::TensorShapeProto::Dimension &d = t.shape().dim(i);
    if (d.has_dim_value() && d.dim_value() > 0) {
      shape.push_back(d.dim_value());
      continue;
    }
    std::string param = d.has_dim_param() ? d.dim_param() : "";
    auto named = options.dims.find(param);
    if (!param.empty() && named != options.dims.end())
      shape.push_back(named->second);
    else if (i == 0 && options.batch > 0)
      shape.push_back(options.batch);
    else
      throw GraphError(where + ": dimension " + std::to_string(i) +
                       (param.empty() ? "" : " ('" + param + "')") +
                       " is dynamic: fix it with " +
                       (i == 0 ? "--batch SIZE or " : "") + "--set " +
                       (param.empty() ? "NAME" : param) + "=SIZE");
  }
  if (product(shape) > (int64_t(1) << 40))
    throw GraphError(where + ": the shape has too many elements");
  return {*dtype, shape};
}

/// Parses NAME[:SHAPE:DTYPE] with SHAPE as 32x10 (or "scalar").
static Tensor labelsInput(Importer &im, const OnnxImportOptions &o, Tensor prediction) {
  std::string spec = o.labels.empty() ? "labels" : o.labels;
  std::string name = spec.substr(0, spec.find(':'));
  std::vector<int64_t> shape = prediction.shape().vec();
  std::string dtype = o.loss == "mse" ? prediction.dtype() : "i64";
  if (o.loss != "mse" && !shape.empty())
    shape.pop_back();
  size_t colon = spec.find(':');
  if (colon != std::string::npos) {
    size_t second = spec.find(':', colon + 1);
    if (second == std::string::npos)
      throw GraphError("--labels: give NAME or NAME:SHAPE:DTYPE, such as y:32:i64");
    std::string dims = spec.substr(colon + 1, second - colon - 1);
    dtype = spec.substr(second + 1);
    shape.clear();
    if (dims != "scalar") {
      size_t at = 0;
      while (at <= dims.size()) {
        size_t x = dims.find('x', at);
        std::string d = dims.substr(at, x == std::string::npos ? std::string::npos : x - at);
        if (d.empty() || d.size() > 12 || d.find_first_not_of("0123456789") != std::string::npos)
          throw GraphError("--labels: bad shape '" + dims + "' (dims joined by x, such as 32x10)");
        shape.push_back(std::stoll(d));
        if (x == std::string::npos)
          break;
        at = x + 1;
      }
    }
  }
  if (name.empty() || im.tensors.count(name))
    throw GraphError("--labels: '" + name + "' is empty or names a value of the model");
  return im.b.input(name, shape, dtype);
}

Tensor classesLast(Importer &im, Tensor scores, int64_t classes, const std::string &name) {
  int64_t rank = scores.rank();
  if (classes == rank - 1)
    return scores;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    if (i != classes)
      perm.push_back(i);
  perm.push_back(classes);
  return im.b.transpose(scores, perm, name);
}

/// The prediction with its classes on the last axis, as
/// softmax_cross_entropy takes them: transposed there from --class-axis.
static Tensor predictionClassesLast(Importer &im, const OnnxImportOptions &o, const std::string &name,
                          Tensor prediction) {
  int64_t rank = prediction.rank();
  std::string shape = graph::infer::shapeString(prediction.shape());
  if (!o.classAxis && rank >= 4) {
    std::string spatial = rank == 4 ? "H, W" : rank == 5 ? "D, H, W" : "...";
    throw GraphError("--loss softmax_cross_entropy: the output '" + name + "' is " + shape +
                     ": give the axis of its classes, --class-axis 1 as PyTorch's "
                     "CrossEntropyLoss reads [N, C, " + spatial +
                     "], or --class-axis -1 for the last");
  }
  int64_t axis = o.classAxis.value_or(-1);
  if (!graph::infer::normaliseAxis(axis, rank))
    throw GraphError("--class-axis " + std::to_string(o.classAxis.value_or(-1)) + ": the output '" + name +
                     "' is " + shape + ", which has no such axis");
  return onnx_import::classesLast(im, prediction, axis, name + ".classes_last");
}

/// PyTorch's exporter names the weights it folds (constant folding, on by
/// default) `onnx::Conv_26`: params that no module name matches. Says so,
/// with the export option that keeps the names.
bool dependsOnParam(mlir::Value v) {
  llvm::SmallVector<mlir::Value> work = {v};
  llvm::DenseSet<mlir::Operation *> seen;
  while (!work.empty()) {
    mlir::Operation *op = work.pop_back_val().getDefiningOp();
    if (!op || !seen.insert(op).second)
      continue;
    if (llvm::isa<graph::ParamOp>(op))
      return true;
    work.append(op->operand_begin(), op->operand_end());
  }
  return false;
}

/// The graph's one float scalar output computed from its params, or ""
/// when it has none or several: the loss of a model that computes its own
/// (a binary cross entropy, a cross entropy without reduction weighed or
/// masked, then a ReduceMean; any loss PyTorch writes out as ops).
static std::string onlyScalarOutput(Importer &im, const onnx::GraphProto &g) {
  std::string found;
  for (const onnx::ValueInfoProto &v : g.output()) {
    mlir::Value value = im.tensor(v.name()).value();
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
    if (!type || type.getRank() != 0 || !mlir::isa<mlir::FloatType>(type.getElementType()) ||
        !dependsOnParam(value))
      continue;
    if (!found.empty())
      return "";
    found = v.name();
  }
  return found;
}

static void warnOfUnnamedParams(mlir::ModuleOp module) {
  int64_t params = 0, unnamed = 0;
  std::string first;
  module.walk([&](graph::ParamOp p) {
    ++params;
    if (p.getName().starts_with("onnx::") && !unnamed++)
      first = p.getName().str();
  });
  if (!unnamed)
    return;
  ErrorCollector warnings(module.getContext());
  mlir::emitWarning(module.getLoc())
      << unnamed << " of its " << params << " params have no module name ('" << first << "'"
      << (unnamed > 1 ? ", ..." : "")
      << "): PyTorch's constant folding renamed them. To keep the names that --freeze, "
         "ampc lora, --init-from and custom black varnames match, export with "
         "do_constant_folding=False (docs/onnx.md)";
}

} // namespace onnx_import

using namespace onnx_import;

mlir::OwningOpRef<mlir::ModuleOp> importOnnx(mlir::MLIRContext &ctx, const std::string &bytes,
                                             const std::string &graphName,
                                             const OnnxImportOptions &options) {
  onnx::ModelProto model;
  if (!parseMessage(bytes, model))
    throw GraphError("not an ONNX model (the protobuf does not parse)");
  if (!model.has_graph() || model.graph().node_size() == 0 ||
      model.graph().output_size() == 0)
    throw GraphError("not an ONNX model (no graph, nodes or outputs)");
  int64_t opset = 0;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset <= 0)
    throw GraphError("the model imports no version of the standard ONNX opset");
  for (onnx::TensorProto &t : *model.mutable_graph()->mutable_initializer())
    if (t.data_location() == onnx::TensorProto::EXTERNAL)
      loadExternalData(t, options.modelDir, "initializer '" + t.name() + "'");
  const onnx::GraphProto &g = model.graph();

  // Refuse the whole model at once, naming every op that cannot be mapped.
  std::string unsupported;
  int count = 0;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto &n = g.node(i);
    bool standard = n.domain().empty() || n.domain() == "ai.onnx";
    if (standard && mappings().count(n.op_type()))
      continue;
    if (++count <= 20)
      unsupported += std::string(count > 1 ? ", " : "") + (standard ? "" : n.domain() + ".") +
                     n.op_type() + " (node '" + (n.name().empty() ? "#" + std::to_string(i)
                                                                  : n.name()) + "')";
  }
  if (count)
    throw GraphError(std::to_string(count) + " unsupported op" + (count > 1 ? "s" : "") + ": " +
                     unsupported + (count > 20 ? ", ..." : ""));

  Importer im(ctx, graphName, opset);
  for (const onnx::TensorProto &t : g.initializer())
    if (!im.initializers.emplace(t.name(), &t).second)
      throw GraphError("initializer '" + t.name() + "' is given twice");
  for (const onnx::ValueInfoProto &v : g.input()) {
    if (im.initializers.count(v.name()))
      continue; // older exporters list initializers as inputs too
    auto [dtype, shape] = inputType(v, options);
    im.tensors[v.name()] = im.b.input(v.name(), shape, dtype);
  }
  for (const onnx::ValueInfoProto &v : g.output())
    im.graphOutputs.insert(v.name());
  for (const NodeProto &n : g.node())
    im.read.insert(n.input().begin(), n.input().end());
  std::set<std::string> taken;
  for (int i = 0; i < g.node_size(); ++i) {
    const NodeProto &n = g.node(i);
    std::string name = n.name().empty() ? n.op_type() + "_" + std::to_string(i) : n.name();
    for (int k = 1; !taken.insert(name).second; ++k)
      name = (n.name().empty() ? n.op_type() : n.name()) + "_" + std::to_string(k);
    im.names[&n] = name;
  }
  // Every value is made once (ONNX graphs are in SSA form): a name given
  // twice would leave the mappings reading whichever came last.
  std::map<std::string, const NodeProto *> makers;
  for (const NodeProto &n : g.node())
    for (const std::string &out : n.output()) {
      if (out.empty())
        continue;
      if (im.initializers.count(out) || im.tensors.count(out))
        throw im.fail(n, "its output '" + out + "' is also a graph input or initializer");
      if (auto [first, fresh] = makers.emplace(out, &n); !fresh)
        throw im.fail(n, "its output '" + out + "' is made by node '" +
                             im.nodeName(*first->second) + "' too");
    }
  // Every node has the inputs and outputs its ONNX schema allows (for the
  // model's opset), so that the mappings may read them.
  for (const NodeProto &n : g.node()) {
    const onnx::OpSchema *schema = onnx::OpSchemaRegistry::Schema(n.op_type(), (int)opset, "");
    if (!schema)
      throw im.fail(n, "opset " + std::to_string(opset) + " has no such op");
    if (n.input_size() < schema->min_input() || n.input_size() > schema->max_input())
      throw im.fail(n, "takes " + std::to_string(schema->min_input()) + " to " +
                           std::to_string(schema->max_input()) + " inputs, got " +
                           std::to_string(n.input_size()));
    // An empty first output is allowed where the schema makes it optional
    // (an LSTM's Y where only its last state Y_h is read).
    bool firstOptional = !schema->outputs().empty() &&
                         schema->outputs()[0].GetOption() == onnx::OpSchema::Optional;
    if (n.output_size() < std::max(1, schema->min_output()) ||
        n.output_size() > schema->max_output() || (n.output(0).empty() && !firstOptional))
      throw im.fail(n, "takes " + std::to_string(std::max(1, schema->min_output())) + " to " +
                           std::to_string(schema->max_output()) + " outputs, got " +
                           std::to_string(n.output_size()));
  }
  im.fuseAttention = options.fuseAttention;
  findPatterns(im, g);
  for (const NodeProto &n : g.node()) {
    auto gelu = im.gelus.find(&n);
    if (gelu != im.gelus.end()) {
      mlir::NamedAttrList attrs;
      if (gelu->second.second)
        attrs.set("approximate", B(im).getBoolAttr(true));
      im.emit(n, "gelu", {im.tensor(gelu->second.first)}, attrs);
    }
    else if (auto a = im.attentions.find(&n); a != im.attentions.end())
      fusedAttention(im, n, a->second);
    else if (!im.skipped.count(&n) && !fold(im, n))
      mappings().at(n.op_type())(im, n);
  }

  std::vector<Tensor> outputs;
  for (const onnx::ValueInfoProto &v : g.output())
    outputs.push_back(im.tensor(v.name()));
  for (const Tensor &t : outputs)
    im.b.output(t);
  if (im.lossOutput.empty() && options.loss.empty())
    im.lossOutput = onlyScalarOutput(im, g);
  if (!im.lossOutput.empty() && options.loss.empty())
    im.b.setLoss(im.tensors[im.lossOutput]);
  if (!options.loss.empty()) {
    std::string on = options.lossOutput.empty() ? g.output(0).name() : options.lossOutput;
    if (!im.tensors.count(on))
      throw GraphError("--loss: the model has no output '" + on + "'");
    Tensor prediction = im.tensors[on];
    if (options.loss == "softmax_cross_entropy")
      prediction = predictionClassesLast(im, options, on, prediction);
    Tensor labels = labelsInput(im, options, prediction);
    if (options.loss == "softmax_cross_entropy")
      im.b.setLoss(im.b.softmaxCrossEntropy(prediction, labels, "loss"));
    else if (options.loss == "mse")
      im.b.setLoss(im.b.mseLoss(prediction, labels, "loss"));
    else
      throw GraphError("--loss: '" + options.loss + "' is not softmax_cross_entropy or mse");
  }
  auto isOutput = [&](mlir::Operation *op) {
    return llvm::any_of(outputs, [&](const Tensor &t) { return t.value() == op->getResult(0); });
  };
  for (auto op = im.removable.rbegin(); op != im.removable.rend(); ++op)
    if ((*op)->use_empty() && !isOutput(*op))
      (*op)->erase();
  mlir::OwningOpRef<mlir::ModuleOp> module = im.b.finish();
  warnOfUnnamedParams(*module);
  return module;
}

} // namespace ampc
