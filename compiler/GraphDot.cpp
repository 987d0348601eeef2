#include "compiler/GraphDot.h"

#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/PrecisionReport.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/JsonText.h"

using namespace mlir;

namespace ampc {
namespace {

const char *fillFor(const std::string &dtype) {
  if (dtype == "f32") return "#9ecae1";
  if (dtype == "f16") return "#fdae6b";
  if (dtype == "bf16") return "#fee391";
  if (dtype == "f8e4m3" || dtype == "f8e5m2") return "#c994c7";
  return "#ffffff";
}

std::string jsonQuoted(const std::string &s) { return rt::dumpJson(Json(s)); }

std::string shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  std::string s = graph::dtypeName(t.getElementType()) + "[";
  for (int64_t i = 0; i < t.getRank(); ++i)
    s += (i ? "," : "") + std::to_string(t.getDimSize(i));
  return s + "]";
}

} // namespace

std::string exportDot(ModuleOp module, const DotOverlay *overlay) {
  auto g = cast<graph::GraphOp>(theGraph(module));
  std::string out = "digraph " + jsonQuoted(g.getSymName().str()) + " {\n";
  out += "  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10, style=filled];\n"
         "  edge [fontname=\"Helvetica\", fontsize=8];\n";
  llvm::DenseMap<Operation *, std::string> ids;
  int next = 0;
  for (Operation &op : g.getBody().front()) {
    std::string id = "n" + std::to_string(next++);
    ids[&op] = id;
    std::string name = graph::nodeName(&op).str();
    if (auto ret = dyn_cast<graph::ReturnOp>(op)) {
      out += "  " + id + " [label=\"outputs\", shape=doubleoctagon, fillcolor=\"#eeeeee\"];\n";
    } else if (graph::isValueOp(&op)) {
      out += "  " + id + " [label=" + jsonQuoted(name + "\n" + shapeOf(op.getResult(0))) +
             ", shape=ellipse, fillcolor=\"#e0e0e0\"];\n";
    } else {
      std::string dtype = computeDtype(&op);
      std::string opName = op.getName().getStringRef().drop_front(6).str();
      bool isCast = isa<graph::CastOp>(op);
      std::string label = name + "\n" + opName + " " + dtype, fill = fillFor(dtype);
      if (overlay) {
        auto it = overlay->nodes.find(name);
        fill = it == overlay->nodes.end() ? "#ffffff" : it->second.first;
        if (it != overlay->nodes.end())
          label += "\n" + it->second.second;
      }
      out += "  " + id + " [label=" + jsonQuoted(label) +
             ", shape=" + (isCast ? "diamond, color=\"#cb181d\", penwidth=2" : "box") +
             ", fillcolor=\"" + fill + "\"];\n";
    }
    for (Value in : op.getOperands())
      if (Operation *def = in.getDefiningOp())
        out += "  " + ids[def] + " -> " + id + " [label=" +
               jsonQuoted(graph::dtypeName(graph::elementType(in.getType()))) + "];\n";
  }
  if (overlay) {
    out += "  subgraph cluster_legend { label=" + jsonQuoted(overlay->title) + "; fontsize=10;\n";
    for (size_t i = 0; i < overlay->legend.size(); ++i)
      out += "    legend" + std::to_string(i) + " [label=" + jsonQuoted(overlay->legend[i].first) +
             ", shape=box, fillcolor=\"" + overlay->legend[i].second + "\"];\n";
    return out + "  }\n}\n";
  }
  out += "  subgraph cluster_legend { label=\"compute dtype\"; fontsize=10;\n"
         "    l32 [label=\"f32\", shape=box, fillcolor=\"#9ecae1\"];\n"
         "    l16 [label=\"f16\", shape=box, fillcolor=\"#fdae6b\"];\n"
         "    lbf [label=\"bf16\", shape=box, fillcolor=\"#fee391\"];\n"
         "    lcast [label=\"cast\", shape=diamond, color=\"#cb181d\", penwidth=2, "
         "fillcolor=\"#ffffff\"];\n  }\n";
  return out + "}\n";
}

} // namespace ampc
