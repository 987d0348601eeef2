// Writes the `graph` dialect as JSON v1: values in definition order (inputs,
// params and consts first as the block holds them), nodes in block order (a
// topological order), one entry per line.
#include "compiler/DenseData.h"
#include "compiler/GraphJson.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/Version.h"

using namespace mlir;

namespace ampc {
namespace {

Json valueJson(Value v, StringRef kind) {
  auto type = cast<RankedTensorType>(v.getType());
  Json j = {{"name", graph::valueName(v).str()}};
  if (!kind.empty())
    j["kind"] = kind.str();
  j["dtype"] = graph::dtypeName(type.getElementType());
  j["shape"] = std::vector<int64_t>(type.getShape());
  return j;
}

Json nodeJson(Operation *op) {
  Json inputs = Json::array(), outputs = Json::array(), attrs = Json::object();
  for (Value in : op->getOperands())
    inputs.push_back(graph::valueName(in).str());
  for (Value out : op->getResults())
    outputs.push_back(graph::valueName(out).str());
  // Attributes equal to the op's ODS default are left out: the importer
  // restores them.
  NamedAttrList defaults;
  op->getName().populateDefaultAttrs(defaults);
  for (NamedAttribute a : op->getAttrs())
    if (a.getName() != "name" && a.getName() != "outs" &&
        defaults.get(a.getName()) != a.getValue())
      attrs[a.getName().str()] = attrToJson(a.getValue());
  StringRef opName = op->getName().getStringRef();
  opName.consume_front("graph.");
  return {{"name", graph::nodeName(op).str()},
          {"op", opName.str()},
          {"inputs", inputs},
          {"outputs", outputs},
          {"attrs", attrs}};
}

void writeList(std::string &out, const char *key, const std::vector<Json> &items) {
  out += "  \"" + std::string(key) + "\": [";
  for (size_t i = 0; i < items.size(); ++i)
    out += (i ? ",\n    " : "\n    ") + rt::dumpJson(items[i]);
  out += items.empty() ? "],\n" : "\n  ],\n";
}

} // namespace

std::string exportGraphJson(ModuleOp module) {
  auto graphs = module.getOps<graph::GraphOp>();
  graph::GraphOp g = *graphs.begin();
  std::vector<Json> values, nodes;
  Json outputs = Json::array();
  for (Operation &op : g.getBody().front()) {
    if (auto ret = dyn_cast<graph::ReturnOp>(op)) {
      for (Value v : ret.getOutputs())
        outputs.push_back(graph::valueName(v).str());
      continue;
    }
    if (auto in = dyn_cast<graph::InputOp>(op)) {
      values.push_back(valueJson(in, "input"));
    } else if (auto p = dyn_cast<graph::ParamOp>(op)) {
      Json j = valueJson(p, "param");
      if (auto init = p.getInit())
        j["init"] = initToJson(*init);
      if (auto trainable = p.getTrainable())
        j["trainable"] = *trainable;
      if (auto master = p.getMasterDtype())
        j["master_dtype"] = graph::dtypeName(*master);
      values.push_back(j);
    } else if (auto c = dyn_cast<graph::ConstOp>(op)) {
      Json j = valueJson(c, "const");
      j["data"] = denseToJson(c.getValue());
      values.push_back(j);
    } else {
      for (Value r : op.getResults())
        values.push_back(valueJson(r, ""));
      nodes.push_back(nodeJson(&op));
    }
  }
  std::string out = "{\n";
  out += "  \"format\": \"ampc.graph\",\n  \"version\": " +
         std::to_string(kGraphFormatVersion) + ",\n";
  out += "  \"name\": " + rt::dumpJson(Json(g.getSymName().str())) + ",\n";
  writeList(out, "values", values);
  writeList(out, "nodes", nodes);
  out += "  \"outputs\": " + rt::dumpJson(outputs);
  if (auto loss = g.getLoss())
    out += ",\n  \"loss\": " + rt::dumpJson(Json(loss->str()));
  if (auto model = g.getModel()) {
    Json args = Json::object();
    for (NamedAttribute arg : model->getAs<DictionaryAttr>("args"))
      args[arg.getName().str()] = cast<StringAttr>(arg.getValue()).str();
    Json record = {{"name", model->getAs<StringAttr>("name").str()}, {"args", args}};
    out += ",\n  \"model\": " + rt::dumpJson(record);
  }
  return out + "\n}\n";
}

} // namespace ampc
