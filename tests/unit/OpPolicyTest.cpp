// The default AMP lists carried by the ops' AmpOpInterface match docs/amp-policy.md.
#include "mlir/IR/MLIRContext.h"
#include "ops/GraphOps.h"
#include "tests/unit/TestUtil.h"

using namespace ampc::graph;

namespace {

struct Policy {
  AmpCategory category;
  bool agnostic;
};

Policy policyOf(mlir::MLIRContext &ctx, const std::string &op) {
  auto name = mlir::RegisteredOperationName::lookup("graph." + op, &ctx);
  EXPECT_TRUE(name.has_value()) << op;
  auto *iface = name->getInterface<AmpOpInterface>();
  EXPECT_NE(iface, nullptr) << op;
  return {iface->getDefaultAmpCategory(), iface->isPrecisionAgnostic()};
}

TEST(OpPolicy, DefaultListsFollowTheSpec) {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<GraphDialect>();
  for (const char *op : {"matmul", "conv2d"})
    EXPECT_EQ(policyOf(ctx, op).category, AmpCategory::White) << op;
  for (const char *op : {"add", "sub", "mul", "div", "maximum", "minimum", "neg", "abs",
                         "scale", "relu", "gelu", "tanh", "sigmoid", "erf", "dropout",
                         "avg_pool2d", "global_avg_pool", "batch_norm"}) {
    EXPECT_EQ(policyOf(ctx, op).category, AmpCategory::Gray) << op;
    EXPECT_FALSE(policyOf(ctx, op).agnostic) << op;
  }
  for (const char *op : {"reshape", "transpose", "flatten", "concat", "slice",
                         "max_pool2d", "identity"}) {
    EXPECT_EQ(policyOf(ctx, op).category, AmpCategory::Gray) << op;
    EXPECT_TRUE(policyOf(ctx, op).agnostic) << op;
  }
  for (const char *op : {"exp", "log", "sqrt", "rsqrt", "pow", "square", "sin", "cos", "reduce_sum",
                         "reduce_mean", "softmax", "log_softmax", "layer_norm", "embedding",
                         "softmax_cross_entropy", "mse_loss"})
    EXPECT_EQ(policyOf(ctx, op).category, AmpCategory::Black) << op;
  for (const char *op : {"cast", "constant", "fill"})
    EXPECT_EQ(policyOf(ctx, op).category, AmpCategory::None) << op;
}

TEST(OpPolicy, StructureOpsHaveNoPolicy) {
  mlir::MLIRContext ctx;
  ctx.getOrLoadDialect<GraphDialect>();
  for (const char *op : {"graph", "return", "input", "param", "const"}) {
    auto name = mlir::RegisteredOperationName::lookup(std::string("graph.") + op, &ctx);
    ASSERT_TRUE(name.has_value());
    EXPECT_EQ(name->getInterface<AmpOpInterface>(), nullptr) << op;
  }
}

} // namespace
