// The JSON v1 importer and exporter: inference of omitted values, order,
// every class of bad input.
#include "compiler/GraphJson.h"
#include "compiler/GraphBuilder.h"
#include "mlir/IR/MLIRContext.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

/// A small valid graph with `nodes` and optional extra values.
std::string graphJson(const std::string &nodes, const std::string &values = "",
                      const std::string &outputs = R"(["h"])") {
  return R"({"format": "ampc.graph", "version": 1, "name": "t",
    "values": [{"name": "x", "kind": "input", "dtype": "f32", "shape": [2, 4]},
               {"name": "w", "kind": "param", "dtype": "f32", "shape": [4, 3],
                "init": {"kind": "normal", "std": 0.02}})" +
         values + R"(],
    "nodes": [)" + nodes + R"(],
    "outputs": )" + outputs + "}";
}

const std::string kMatmul =
    R"({"name": "fc", "op": "matmul", "inputs": ["x", "w"], "outputs": ["h"], "attrs": {}})";

mlir::OwningOpRef<mlir::ModuleOp> load(mlir::MLIRContext &ctx, const std::string &text) {
  loadDialects(ctx);
  return importGraphJson(ctx, text);
}

TEST(GraphJson, InfersOmittedValuesAndKeepsNames) {
  mlir::MLIRContext ctx;
  auto m = load(ctx, graphJson(kMatmul));
  graph::GraphOp g = *m->getOps<graph::GraphOp>().begin();
  graph::MatmulOp mm = *g.getOps<graph::MatmulOp>().begin();
  EXPECT_EQ(graph::nodeName(mm), "fc");
  EXPECT_EQ(graph::valueName(mm.getY()), "h");
  EXPECT_EQ(mm.getY().getType(), mlir::RankedTensorType::get({2, 3}, mlir::Float32Type::get(&ctx)));
}

TEST(GraphJson, NodesInAnyOrderAreSortedTopologically) {
  mlir::MLIRContext ctx;
  std::string nodes =
      R"({"name": "act", "op": "relu", "inputs": ["h"], "outputs": ["r"]},)" + kMatmul;
  auto m = load(ctx, graphJson(nodes, "", R"(["r"])"));
  std::string text = exportGraphJson(*m);
  EXPECT_LT(text.find("\"name\":\"fc\""), text.find("\"name\":\"act\""));
}

TEST(GraphJson, ExportImportIsStable) {
  mlir::MLIRContext ctx;
  auto m = load(ctx, graphJson(kMatmul, R"(, {"name": "eps", "kind": "const", "dtype": "f32", "shape": [], "data": [1e-5]})"));
  std::string once = exportGraphJson(*m);
  auto again = load(ctx, once);
  EXPECT_EQ(exportGraphJson(*again), once);
  EXPECT_NE(once.find("\"data\":[1e-05]"), std::string::npos) << once;
}

struct BadCase {
  const char *what;
  std::string text;
  const char *needle;
};

TEST(GraphJson, EveryBadInputClassIsAnError) {
  std::vector<BadCase> cases = {
      {"malformed", "{\"format\": ", "malformed JSON"},
      {"not object", "[1, 2]", "not a JSON object"},
      {"format", R"({"format": "onnx", "version": 1})", "\"format\" must be \"ampc.graph\""},
      {"version", R"({"format": "ampc.graph", "version": 2})", "unsupported graph version 2"},
      {"unknown op",
       graphJson(R"({"name": "n", "op": "frobnicate", "inputs": ["x"], "outputs": ["h"]})"),
       "node 'n': unknown op 'frobnicate'"},
      {"dangling input",
       graphJson(R"({"name": "n", "op": "relu", "inputs": ["nope"], "outputs": ["h"]})"),
       "node 'n': input 'nope' names no value"},
      {"dangling output", graphJson(kMatmul, "", R"(["zzz"])"), "output 'zzz' names no value"},
      {"duplicate value", graphJson(kMatmul, R"(, {"name": "x", "kind": "input", "dtype": "f32", "shape": [1]})"),
       "value 'x': duplicate value name"},
      {"duplicate node", graphJson(kMatmul + "," + kMatmul), "node 'fc': duplicate node name"},
      {"two producers",
       graphJson(kMatmul + R"(, {"name": "fc2", "op": "relu", "inputs": ["x"], "outputs": ["h"]})"),
       "value 'h' has two producers"},
      {"cycle",
       graphJson(R"({"name": "a", "op": "relu", "inputs": ["b.out"], "outputs": ["a.out"]},
                   {"name": "b", "op": "relu", "inputs": ["a.out"], "outputs": ["b.out"]})",
                 "", R"(["x"])"),
       "cycle through nodes 'a', 'b'"},
      {"shape mismatch",
       graphJson(R"({"name": "fc", "op": "matmul", "inputs": ["w", "w"], "outputs": ["h"]})"),
       "node 'fc': 'graph.matmul' op contracting dimensions differ"},
      {"dtype mismatch",
       graphJson(kMatmul + R"(, {"name": "s", "op": "add", "inputs": ["h", "hh"], "outputs": ["s"]})",
                 R"(, {"name": "hh", "kind": "input", "dtype": "f16", "shape": [2, 3]})"),
       "node 's': operands have different dtypes"},
      {"declared mismatch", graphJson(kMatmul, R"(, {"name": "h", "dtype": "f16", "shape": [2, 3]})"),
       "value 'h': declared f16[2,3] but node 'fc' computes f32[2,3]"},
      {"bad dtype", graphJson(kMatmul, R"(, {"name": "q", "kind": "input", "dtype": "f8", "shape": [1]})"),
       "value 'q': unknown dtype 'f8'"},
      {"bad kind", graphJson(kMatmul, R"(, {"name": "q", "kind": "variable", "dtype": "f32", "shape": [1]})"),
       "kind must be input, param or const"},
      {"negative shape", graphJson(kMatmul, R"(, {"name": "q", "kind": "input", "dtype": "f32", "shape": [-1]})"),
       "shape entries must be non-negative"},
      {"const data", graphJson(kMatmul, R"(, {"name": "q", "kind": "const", "dtype": "f32", "shape": [2], "data": [1]})"),
       "value 'q': data has 1 elements, the shape needs 2"},
      {"bad attr kind",
       graphJson(R"({"name": "sm", "op": "softmax", "inputs": ["x"], "outputs": ["h"], "attrs": {"axis": "last"}})"),
       "node 'sm'"},
      {"bad cast target",
       graphJson(R"({"name": "c", "op": "cast", "inputs": ["x"], "outputs": ["h"], "attrs": {"to": "f8"}})"),
       "node 'c': attribute 'to': unknown dtype 'f8'"},
      {"loss not output", graphJson(kMatmul, "", R"(["h"], "loss": "x")"),
       "loss 'x' is not listed in \"outputs\""},
      {"unknown init", graphJson(kMatmul, R"(, {"name": "p", "kind": "param", "dtype": "f32", "shape": [1], "init": {"kind": "magic"}})"),
       "value 'p': 'graph.param' op unknown init kind 'magic'"},
      {"missing nodes", R"({"format": "ampc.graph", "version": 1, "values": []})",
       "needs \"nodes\""},
      {"value without producer", graphJson(kMatmul, R"(, {"name": "orphan", "dtype": "f32", "shape": [1]})"),
       "value 'orphan': no kind and no node produces it"},
  };
  for (const BadCase &c : cases) {
    SCOPED_TRACE(c.what);
    mlir::MLIRContext ctx;
    EXPECT_GRAPH_ERROR(load(ctx, c.text), c.needle);
  }
}

} // namespace
