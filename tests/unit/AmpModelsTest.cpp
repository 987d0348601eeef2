// The AMP pass over every model of the zoo at O1 and O2, f16 and bf16: the
// result verifies, no black op computes in L, every white op does, every
// non-cast node's float operands have its dtype (batch norm's parameter slots
// stay f32; cross entropy may read L logits, which it widens exactly), a
// second run changes nothing, and ampc inserts no more casts and
// puts no fewer nodes in L than Paddle's rule (no upstream cast move).
#include "compiler/GraphIO.h"
#include "compiler/Pipelines.h"
#include "compiler/PrecisionReport.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "models/Models.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "passes/AmpDecision.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

struct AmpCase {
  std::string model;
  std::map<std::string, std::string> sets;
  std::string level, dtype;
};

void PrintTo(const AmpCase &c, std::ostream *os) {
  *os << c.model << " " << c.level << " " << c.dtype;
}

class AmpOnModels : public ::testing::TestWithParam<AmpCase> {
protected:
  mlir::OwningOpRef<mlir::ModuleOp> rewrite(mlir::MLIRContext &ctx, bool upstream = true) {
    auto m = buildModel(ctx, GetParam().model, GetParam().sets);
    AmpSettings s;
    s.level = GetParam().level;
    s.dtype = GetParam().dtype;
    s.moveCastsUpstream = upstream;
    runAmpPipeline(*m, s);
    return m;
  }
};

int64_t lowNodes(const PrecisionReport &r, const std::string &dtype) {
  int64_t n = 0;
  for (const auto &[op, counts] : r.ops)
    if (op != "cast" && counts.count(dtype))
      n += counts.at(dtype);
  return n;
}

TEST_P(AmpOnModels, KeepsThePolicyInvariants) {
  mlir::MLIRContext ctx;
  auto m = rewrite(ctx);
  ASSERT_TRUE(mlir::succeeded(mlir::verify(*m)));
  std::string low = GetParam().dtype;
  auto g = llvm::cast<graph::GraphOp>(theGraph(*m));
  for (mlir::Operation *op : amp::graphNodes(g)) {
    std::string dtype = computeDtype(op);
    std::string name = graph::nodeName(op).str();
    auto amp = llvm::dyn_cast<graph::AmpOpInterface>(op);
    ASSERT_TRUE(amp) << name;
    if (amp.getDefaultAmpCategory() == graph::AmpCategory::Black) {
      EXPECT_NE(dtype, low) << "black node in L: " << name;
    }
    if (amp.getDefaultAmpCategory() == graph::AmpCategory::White) {
      EXPECT_EQ(dtype, low) << "white node not in L: " << name;
    }
    if (llvm::isa<graph::CastOp>(op))
      continue;
    for (mlir::OpOperand &use : op->getOpOperands()) {
      mlir::Type t = use.get().getType();
      if (!graph::isFloatTensor(t))
        continue;
      std::string want = amp.keepsOperandF32(use.getOperandNumber()) ? "f32" : dtype;
      std::string have = graph::dtypeName(graph::elementType(t));
      if (amp.widensOperand(use.getOperandNumber()) && have == low)
        continue; // the loss widens its low-precision logits itself
      EXPECT_EQ(have, want) << name << " operand " << use.getOperandNumber();
    }
  }
}

TEST_P(AmpOnModels, IsIdempotent) {
  mlir::MLIRContext ctx;
  auto m = rewrite(ctx);
  std::string once = printGraph(*m, "x.mlir");
  AmpSettings s;
  s.level = GetParam().level;
  s.dtype = GetParam().dtype;
  runAmpPipeline(*m, s);
  EXPECT_EQ(printGraph(*m, "x.mlir"), once);
}

TEST_P(AmpOnModels, NoWorseThanPaddlesRule) {
  mlir::MLIRContext ctx;
  PrecisionReport ours = makeReport(*rewrite(ctx, true));
  PrecisionReport paddle = makeReport(*rewrite(ctx, false));
  EXPECT_LE(ours.casts, paddle.casts);
  EXPECT_GE(lowNodes(ours, GetParam().dtype), lowNodes(paddle, GetParam().dtype));
  EXPECT_GE(ours.flopsLowPrecision, paddle.flopsLowPrecision);
}

std::vector<AmpCase> cases() {
  std::vector<std::pair<std::string, std::map<std::string, std::string>>> models = {
      {"simplenet", {{"hidden", "256"}}}, {"mlp", {}}, {"mnist_cnn", {}},
      {"resnet", {{"depth", "18"}}},      {"resnet", {{"depth", "50"}}},
      {"bert", {{"layers", "2"}}}};
  std::vector<AmpCase> out;
  for (auto &[model, sets] : models)
    for (const char *level : {"O1", "O2"})
      for (const char *dtype : {"f16", "bf16"})
        out.push_back({model, sets, level, dtype});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Zoo, AmpOnModels, ::testing::ValuesIn(cases()),
                         [](const auto &info) {
                           std::string n = info.param.model;
                           for (const auto &[k, v] : info.param.sets)
                             n += "_" + v;
                           return n + "_" + info.param.level + "_" + info.param.dtype;
                         });

TEST(AmpBert, BaseAtO1RunsAlmostAllFlopsInF16) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "bert", {});
  runAmpPipeline(*m, AmpSettings{});
  PrecisionReport r = makeReport(*m);
  EXPECT_GE(r.flopsLowPrecision / r.flopsTotal, 0.95);
}

TEST(AmpErrors, BadOptionsNameTheProblem) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {});
  AmpSettings s;
  s.customWhiteList = {"relu"};
  s.customBlackList = {"relu"};
  EXPECT_GRAPH_ERROR(runAmpPipeline(*m, s),
                     "op 'relu' is in both custom_white_list and custom_black_list");
  s = AmpSettings{};
  s.customBlackVarnames = {"fc9.w"};
  EXPECT_GRAPH_ERROR(runAmpPipeline(*m, s), "'fc9.w' names no value");
  s = AmpSettings{};
  s.level = "O4";
  EXPECT_GRAPH_ERROR(runAmpPipeline(*m, s), "level must be O0, O1, O2 or O3");
}

} // namespace
