// The memory planner: in-place and aliasing where legal, no overlap of live
// buffers (checked by running every model with and without reuse and getting
// bit-identical outputs, and training plans with the same state after two
// steps), arenas close to the most bytes live at once, and plans that
// round-trip through JSON.
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/core/MemoryPlanner.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;
using namespace ampc::test;

namespace {

TEST(MemoryPlan, ElementwiseChainsRunInPlace) {
  auto c = compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {1024});
    Tensor h = g.relu(x, "r1");
    h = g.unary("tanh", h, "r2");
    h = g.unary("exp", h, "r3");
    g.output(h);
  });
  const rt::Plan &p = c.plan;
  int r1 = p.find("r1"), r2 = p.find("r2"), r3 = p.find("r3"), x = p.find("x");
  EXPECT_EQ(p.buffers[r1].offset, p.buffers[r2].offset);
  EXPECT_EQ(p.buffers[r2].offset, p.buffers[r3].offset);
  EXPECT_NE(p.buffers[x].offset, p.buffers[r1].offset); // inputs are never overwritten
  EXPECT_EQ(p.arenaBytes, 2 * 4096);
  EXPECT_EQ(p.unsharedBytes, 4 * 4096);
}

TEST(MemoryPlan, LiveBuffersDoNotOverlapAndReshapeAliases) {
  auto c = compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {16, 16});
    Tensor a = g.relu(x, "a");
    Tensor b = g.unary("exp", x, "b");
    Tensor r = g.reshape(a, {256}, "flat");
    g.output(g.add(g.reshape(b, {256}, "bflat"), r, "sum"));
  });
  const rt::Plan &p = c.plan;
  auto range = [&](const char *n) {
    const rt::Buffer &b = p.buffers[p.find(n)];
    return std::make_pair(b.offset, b.offset + b.bytes);
  };
  auto [a0, a1] = range("a");
  auto [b0, b1] = range("b");
  EXPECT_TRUE(a1 <= b0 || b1 <= a0) << "a and b are live together";
  EXPECT_EQ(range("flat").first, a0);
  EXPECT_EQ(range("bflat").first, b0);
}

TEST(MemoryPlan, GraphOutputsAreNotReused) {
  auto c = compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {64});
    Tensor out = g.relu(x, "out");
    g.output(out);
    g.output(g.unary("exp", g.unary("tanh", out, "t"), "e"));
  });
  const rt::Plan &p = c.plan;
  EXPECT_NE(p.buffers[p.find("out")].offset, p.buffers[p.find("t")].offset);
}

/// Deterministic bytes in every input (floats small, integers zero).
void fillInputs(const rt::Plan &plan, rt::Executor &ex) {
  for (int id : plan.inputs) {
    const rt::Buffer &b = plan.buffers[id];
    std::vector<std::byte> bytes(b.bytes);
    for (int64_t i = 0; i < b.bytes; ++i)
      bytes[i] = std::byte(rt::isFloat(b.dtype) ? (i * 7) % 61 : 0);
    ex.write(id, bytes.data(), bytes.size());
  }
}

struct ModelCase {
  std::string name;
  std::map<std::string, std::string> sets;
  std::string level;
};

void PrintTo(const ModelCase &c, std::ostream *os) { *os << c.name << " " << c.level; }

class ReuseOnModels : public ::testing::TestWithParam<ModelCase> {};

TEST_P(ReuseOnModels, OutputsAreBitIdenticalWithoutReuse) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, GetParam().name, GetParam().sets);
  AmpSettings s;
  s.level = GetParam().level;
  runAmpPipeline(*m, s);
  rt::Plan planned = lowerToPlan(*m);
  EXPECT_LT(planned.arenaBytes, planned.unsharedBytes);
  rt::Executor reused(planned, {false, 3}), separate(rt::withoutReuse(planned), {false, 3});
  for (rt::Executor *ex : {&reused, &separate})
    fillInputs(planned, *ex);
  reused.run();
  separate.run();
  for (int id : planned.outputs)
    EXPECT_EQ(reused.readBytes(id), separate.readBytes(id)) << planned.buffers[id].name;
  // And the plan survives its JSON form.
  rt::Plan back = rt::planFromJson(rt::planToJson(planned));
  EXPECT_EQ(rt::planToJson(back), rt::planToJson(planned));
}

// A plan file keeps every field of its target: a CUDA plan read back fits
// the CUDA backend (its attention head_dim limit and FP8 GEMM layout were
// once left out, and every compiled CUDA plan was refused).
TEST(MemoryPlan, PlanFilesKeepTheirTarget) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {});
  for (const rt::Target *target : {&rt::cpuTarget(), &rt::cudaTarget()}) {
    rt::Plan back = rt::planFromJson(rt::planToJson(lowerToPlan(*m, *target)));
    EXPECT_EQ(back.target, *target) << target->name;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, ReuseOnModels,
    ::testing::Values(ModelCase{"mlp", {}, "O0"}, ModelCase{"mlp", {}, "O1"},
                      ModelCase{"mnist_cnn", {{"batch", "8"}}, "O1"},
                      ModelCase{"resnet", {{"depth", "18"}, {"batch", "1"}, {"image", "32"}}, "O2"},
                      ModelCase{"bert", {{"layers", "1"}, {"batch", "1"}, {"seq", "16"},
                                         {"vocab", "64"}, {"hidden", "32"}, {"heads", "2"}}, "O1"}),
    [](const auto &info) { return info.param.name + "_" + info.param.level; });

class TrainingPlans : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TrainingPlans, PackTightlyAndTrainAsWithoutReuse) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, GetParam().name, GetParam().sets);
  AmpSettings s;
  s.level = GetParam().level;
  runTrainingPipeline(*m, s, TrainSettings{});
  rt::Plan planned = lowerToPlan(*m);
  EXPECT_GE(planned.arenaBytes, planned.liveBytes);
  EXPECT_LE(planned.arenaBytes, planned.liveBytes + planned.liveBytes / 50)
      << "within 2% of the most bytes live at once";
  rt::Executor reused(planned, {true, 3}), separate(rt::withoutReuse(planned), {true, 3});
  for (rt::Executor *ex : {&reused, &separate}) {
    fillInputs(planned, *ex);
    ex->writeScalar(ex->id("lr"), 0.01);
    ex->run();
    ex->run();
  }
  auto a = paramBytes(planned, reused), b = paramBytes(planned, separate);
  for (const auto &[name, bytes] : a)
    EXPECT_EQ(bytes, b[name]) << name;
}

INSTANTIATE_TEST_SUITE_P(
    Zoo, TrainingPlans,
    ::testing::Values(ModelCase{"mlp", {}, "O1"},
                      ModelCase{"mnist_cnn", {{"batch", "8"}}, "O2"},
                      ModelCase{"bert", {{"layers", "2"}, {"batch", "2"}, {"seq", "16"},
                                         {"vocab", "64"}, {"hidden", "32"}, {"heads", "2"}}, "O1"}),
    [](const auto &info) { return info.param.name + "_" + info.param.level; });

/// O0 and O1 (f16) compute the same function within f16 rounding.
double maxRelativeGap(const std::string &model, const std::map<std::string, std::string> &sets) {
  std::vector<std::vector<float>> outputs;
  for (const char *level : {"O0", "O1"}) {
    mlir::MLIRContext ctx;
    auto m = buildModel(ctx, model, sets);
    AmpSettings s;
    s.level = level;
    runAmpPipeline(*m, s);
    rt::Plan plan = lowerToPlan(*m);
    rt::Executor ex(plan, {false, 11});
    std::mt19937 rng(5);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (int id : plan.inputs) {
      const rt::Buffer &b = plan.buffers[id];
      std::vector<float> v(rt::numElements(b.shape));
      for (float &x : v)
        x = rt::isFloat(b.dtype) ? std::fabs(dist(rng)) : float(rng() % 10);
      ex.writeF32(id, v);
    }
    ex.run();
    outputs.push_back(ex.readF32(plan.outputs[0]));
  }
  double scale = 0, gap = 0;
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    scale = std::max(scale, (double)std::fabs(outputs[0][i]));
    gap = std::max(gap, (double)std::fabs(outputs[0][i] - outputs[1][i]));
  }
  return gap / scale;
}

TEST(AmpNumerics, O1AgreesWithO0OnMlpAndMnistCnn) {
  // f16 keeps 11 significant bits; a few layers of rounding stay within 1%.
  EXPECT_LT(maxRelativeGap("mlp", {}), 1e-2);
  EXPECT_LT(maxRelativeGap("mnist_cnn", {{"batch", "16"}}), 1e-2);
}

} // namespace
