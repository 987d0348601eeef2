// The C++ builder API: names and scopes, inference, outputs and loss, errors.
#include "compiler/GraphBuilder.h"
#include "compiler/GraphIO.h"
#include "compiler/Layers.h"
#include "mlir/IR/MLIRContext.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

TEST(Builder, ScopesQualifyNodeAndParamNames) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "scoped");
  Tensor x = b.input("x", {2, 3, 8});
  Tensor y;
  {
    auto s1 = b.scope("encoder");
    auto s2 = b.scope("layer0");
    y = multiHeadAttention(b, x, 2, "attn");
  }
  EXPECT_EQ(y.name(), "encoder.layer0.attn.out.add");
  b.output(y);
  auto module = b.finish();
  bool sawQ = false;
  module->walk([&](graph::ParamOp p) { sawQ |= p.getName() == "encoder.layer0.attn.q.w"; });
  EXPECT_TRUE(sawQ);
}

TEST(Builder, TakenNodeNamesGetASuffix) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "names");
  Tensor x = b.input("x", {4});
  Tensor a = b.relu(x, "act");
  Tensor c = b.relu(a, "act");
  EXPECT_EQ(a.name(), "act");
  EXPECT_EQ(c.name(), "act_1");
}

TEST(Builder, AGraphPast2To18NamesIsAnError) {
  // A size given by mistake (layers=10^8) stops at the cap, not after hours.
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "huge");
  Tensor x = b.input("x", {1});
  int64_t nodes = 0;
  try {
    for (;; ++nodes)
      x = b.relu(x, "r"); // one name: suffixes r_1, r_2, ... in linear time
  } catch (const GraphError &e) {
    EXPECT_NE(std::string(e.what()).find("the graph passes 262144 nodes and values"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(nodes, (1 << 18) - 1); // the input's name, then a relu a name
}

TEST(Builder, InfersShapesAndDtypes) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "infer");
  Tensor x = b.input("x", {8, 16, 16, 8}, "f16");
  Tensor w = b.param("w", {32, 3, 3, 8}, Init::kaimingNormal(), "f16");
  Conv2dAttrs attrs;
  attrs.strides = {2, 2};
  attrs.padding = {1, 1};
  Tensor y = b.conv2d(x, w, attrs);
  EXPECT_EQ(y.shape(), llvm::ArrayRef<int64_t>({8, 8, 8, 32}));
  EXPECT_EQ(y.dtype(), "f16");
  Tensor p = b.globalAvgPool(y);
  EXPECT_EQ(p.shape(), llvm::ArrayRef<int64_t>({8, 32}));
  Tensor f = b.cast(p, "f32");
  EXPECT_EQ(f.dtype(), "f32");
  Tensor r = b.reduceMean(f, {1}, true);
  EXPECT_EQ(r.shape(), llvm::ArrayRef<int64_t>({8, 1}));
}

TEST(Builder, LossBecomesAnOutput) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "loss");
  Tensor x = b.input("x", {4, 8});
  Tensor t = b.input("t", {4, 8});
  b.setLoss(b.mseLoss(linear(b, x, 8, "fc"), t, "loss"));
  auto module = b.finish();
  auto g = *module->getOps<graph::GraphOp>().begin();
  EXPECT_EQ(g.getLoss(), "loss");
  auto ret = llvm::cast<graph::ReturnOp>(g.getBody().front().getTerminator());
  ASSERT_EQ(ret.getOutputs().size(), 1u);
  EXPECT_EQ(graph::valueName(ret.getOutputs()[0]), "loss");
}

TEST(Builder, ShapeMismatchNamesTheNode) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bad");
  Tensor x = b.input("x", {4, 8});
  Tensor w = b.param("w", {9, 2}, Init::zeros());
  EXPECT_GRAPH_ERROR(b.matmul(x, w, false, false, "fc"), "node 'fc'");
  EXPECT_GRAPH_ERROR(b.matmul(x, w, false, false, "fc2"), "contracting dimensions differ");
}

TEST(Builder, DtypeMismatchIsAnError) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bad");
  Tensor x = b.input("x", {4}, "f16");
  Tensor y = b.input("y", {4}, "f32");
  EXPECT_GRAPH_ERROR(b.add(x, y, "sum"), "different dtypes");
}

TEST(Builder, DuplicateValueNamesAreRejected) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "dup");
  b.input("x", {4});
  EXPECT_GRAPH_ERROR(b.param("x", {4}, Init::zeros()), "already taken");
}

TEST(Builder, BadAttributesAreErrors) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "attrs");
  Tensor x = b.input("x", {2, 3});
  EXPECT_GRAPH_ERROR(b.dropout(x, 1.5), "rate must be in [0, 1)");
  EXPECT_GRAPH_ERROR(b.transpose(x, {0, 0}), "not a permutation");
  EXPECT_GRAPH_ERROR(b.reshape(x, {4, -1}), "cannot reshape");
  EXPECT_GRAPH_ERROR(b.softmax(x, 2), "axis is out of range");
  EXPECT_GRAPH_ERROR(b.node("no_such_op", {x}), "unknown op 'no_such_op'");
  EXPECT_GRAPH_ERROR(b.param("p", {2}, Init{"gaussian", {}}), "unknown init kind");
}

TEST(Builder, ConstantsRoundToTheirDtype) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "consts");
  Tensor c = b.constValue("c", {2}, {65504.0, 65520.0}, "f16");
  auto op = llvm::cast<graph::ConstOp>(c.value().getDefiningOp());
  auto values = llvm::cast<mlir::DenseElementsAttr>(op.getValue()).getValues<llvm::APFloat>();
  EXPECT_EQ(values[0].convertToDouble(), 65504.0);
  EXPECT_TRUE(values[1].isInfinity());
}

TEST(Builder, TheReadmeExampleBuildsAndSaves) {
  std::string path = ::testing::TempDir() + "/readme-mlp.json";
  {
    // Verbatim from README.md.
    mlir::MLIRContext ctx;
    ampc::GraphBuilder b(ctx, "mlp");
    ampc::Tensor x = b.input("x", {64, 784});
    ampc::Tensor labels = b.input("labels", {64}, "i64");
    ampc::Tensor h = b.relu(ampc::linear(b, x, 512, "fc1"), "relu1");
    h = b.relu(ampc::linear(b, h, 512, "fc2"), "relu2");
    b.setLoss(b.softmaxCrossEntropy(ampc::linear(b, h, 10, "fc3"), labels, "loss"));
    ampc::saveGraph(*b.finish(), path);
  }
  mlir::MLIRContext ctx;
  auto m = loadGraph(ctx, path);
  EXPECT_EQ((*m->getOps<graph::GraphOp>().begin()).getLoss(), "loss");
}

} // namespace
