// Every model of the zoo builds, verifies, and round-trips JSON -> MLIR -> JSON
// and MLIR -> JSON -> MLIR unchanged.
#include "compiler/GraphIO.h"
#include "compiler/GraphJson.h"
#include "compiler/PrecisionReport.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "models/Models.h"
#include "ops/GraphOps.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

struct ModelCase {
  std::string name;
  std::map<std::string, std::string> sets;
};

void PrintTo(const ModelCase &c, std::ostream *os) {
  *os << c.name;
  for (const auto &[k, v] : c.sets)
    *os << " " << k << "=" << v;
}

class ModelRoundTrip : public ::testing::TestWithParam<ModelCase> {};

std::string mlirText(mlir::ModuleOp m) { return printGraph(m, "x.mlir"); }

TEST_P(ModelRoundTrip, JsonMlirJsonIsUnchanged) {
  mlir::MLIRContext ctx;
  auto built = buildModel(ctx, GetParam().name, GetParam().sets);
  std::string json = exportGraphJson(*built);
  std::string mlir = mlirText(*built);

  auto fromJson = importGraphJson(ctx, json);
  EXPECT_EQ(mlirText(*fromJson), mlir);
  auto fromMlir = mlir::parseSourceString<mlir::ModuleOp>(mlir, &ctx);
  ASSERT_TRUE(fromMlir);
  EXPECT_EQ(exportGraphJson(*fromMlir), json);
}

TEST_P(ModelRoundTrip, HasALossAndMatrixWork) {
  mlir::MLIRContext ctx;
  auto built = buildModel(ctx, GetParam().name, GetParam().sets);
  auto g = *built->getOps<graph::GraphOp>().begin();
  EXPECT_TRUE(g.getLoss().has_value());
  PrecisionReport r = makeReport(*built);
  EXPECT_GT(r.flopsTotal, 0);
  EXPECT_EQ(r.casts, 0);
  EXPECT_TRUE(r.ops.count("matmul"));
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ModelRoundTrip,
    ::testing::Values(ModelCase{"simplenet", {{"hidden", "256"}}}, ModelCase{"mlp", {}},
                      ModelCase{"mnist_cnn", {}}, ModelCase{"resnet", {{"depth", "18"}}},
                      ModelCase{"resnet", {{"depth", "50"}}},
                      ModelCase{"bert", {{"layers", "2"}}},
                      ModelCase{"bert", {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}}}),
    [](const auto &info) {
      std::string n = info.param.name;
      for (const auto &[k, v] : info.param.sets)
        n += "_" + k + v;
      return n;
    });

TEST(Models, BertLargeHasTheExpectedShape) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "bert", {{"layers", "24"}, {"hidden", "1024"}, {"heads", "16"}});
  int64_t params = 0, layerNorms = 0;
  m->walk([&](graph::ParamOp p) {
    if (p.getTrainable().value_or(true))
      params += llvm::cast<mlir::RankedTensorType>(p.getType()).getNumElements();
  });
  m->walk([&](graph::LayerNormOp) { ++layerNorms; });
  EXPECT_EQ(layerNorms, 24 * 2 + 2);
  // BERT-large has about 335M parameters with the tied MLM head.
  EXPECT_GT(params, 330'000'000);
  EXPECT_LT(params, 345'000'000);
}

TEST(Models, BadParametersAreErrors) {
  mlir::MLIRContext ctx;
  EXPECT_GRAPH_ERROR(buildModel(ctx, "gpt", {}), "unknown model 'gpt'");
  EXPECT_GRAPH_ERROR(buildModel(ctx, "mlp", {{"width", "3"}}), "has no parameter 'width'");
  EXPECT_GRAPH_ERROR(buildModel(ctx, "mlp", {{"batch", "-3"}}), "positive integer");
  EXPECT_GRAPH_ERROR(buildModel(ctx, "resnet", {{"depth", "34"}}), "must be 18 or 50");
  EXPECT_GRAPH_ERROR(buildModel(ctx, "bert", {{"hidden", "100"}, {"heads", "12"}}),
                     "not a multiple of 12 heads");
}

} // namespace
