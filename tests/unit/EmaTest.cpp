// The weights' moving average (docs/training.md, "Weight averaging (EMA)"):
// the `ema` and `count_step` steps over a sequence of applied and skipped
// steps against the formula, and a trained graph's averages starting as its
// params' initial values and following the first update.
#include <cmath>

#include "compiler/GraphBuilder.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/MemoryPlanner.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

/// count_step then ema with warmup, over an f32 [4] average, an f16 [4]
/// value input and a found_inf input.
struct AveragePlan {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  explicit AveragePlan(double decay) {
    auto buffer = [&](const char *name, rt::BufferKind kind, rt::DType t,
                      std::vector<int64_t> shape, double init) {
      return test::addBuffer(plan, name, kind, t, shape, init);
    };
    int found = buffer("found_inf", rt::BufferKind::Input, rt::DType::I1, {}, 0);
    int value = buffer("value", rt::BufferKind::Input, rt::DType::F16, {4}, 0);
    int average = buffer("average", rt::BufferKind::Param, rt::DType::F32, {4}, 1);
    int step = buffer("step", rt::BufferKind::Param, rt::DType::F32, {}, 0);
    plan.inputs = {found, value};
    plan.steps.push_back({"count", rt::Kernel::CountStep, {step, found}, {}, rt::Json::object()});
    plan.steps.push_back(
        {"ema", rt::Kernel::Ema, {average, value, found, step}, {}, {{"decay", decay}}});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
  }
  void step(bool skipped, float value) {
    ex->writeScalar(ex->id("found_inf"), skipped);
    ex->writeF32(ex->id("value"), std::vector<float>(4, value));
    ex->run();
  }
};

TEST(Ema, SkippedStepsNeitherMoveTheAverageNorCountForTheWarmup) {
  AveragePlan p(0.9);
  double want = 1.0;
  int applied = 0;
  struct {
    bool skipped;
    float value;
  } steps[] = {{false, 3.0f}, {true, 100.0f}, {false, -2.0f}, {false, 0.5f},
               {true, 7.0f},  {false, 2.0f},  {false, 2.0f}};
  for (auto s : steps) {
    p.step(s.skipped, s.value);
    if (!s.skipped) {
      ++applied;
      double d = std::min(0.9, (1.0 + applied) / (10.0 + applied));
      want += (1 - d) * (s.value - want);
    }
    EXPECT_EQ(test::scalarOf(*p.ex, "step"), applied);
    for (float a : test::valuesOf(*p.ex, "average"))
      EXPECT_NEAR(a, want, 1e-6) << "after " << applied << " applied steps";
  }
}

TEST(Ema, TheAverageStartsAsTheParamAndFollowsItsUpdates) {
  for (const char *level : {"O0", "O2"}) {
    mlir::MLIRContext ctx;
    GraphBuilder b(ctx, "linear");
    Tensor x = b.input("x", {4, 8});
    Tensor w = b.param("w", {8, 8}, Init::normal(0.1));
    b.setLoss(b.reduceSum(b.matmul(x, w), {}, false, "loss"));
    auto m = b.finish();
    AmpSettings amp;
    amp.level = level;
    TrainSettings train;
    train.emaDecay = 0.75;
    train.initLossScaling = 1024; // the sum's gradient, S, is f16 at O2
    runTrainingPipeline(*m, amp, train);
    test::dumpCudaPlan(*m);
    rt::Plan plan = lowerToPlan(*m);
    rt::Executor ex(plan, {true, 9});
    std::vector<float> start = test::valuesOf(ex, "w"), average = test::valuesOf(ex, "w.ema");
    for (size_t i = 0; i < start.size(); ++i) // the param's values, at its own dtype's rounding
      ASSERT_NEAR(average[i], start[i], 1e-3 * std::fabs(start[i])) << level;
    if (std::string(level) == "O0")
      ASSERT_EQ(average, start);
    std::vector<float> master = plan.find("w.master") >= 0 ? test::valuesOf(ex, "w.master")
                                                           : start;
    ASSERT_EQ(average, master) << level << ": the average starts as what the update writes";
    ex.writeScalar(ex.id("lr"), 0.5);
    ex.writeF32(ex.id("x"), std::vector<float>(32, 0.25f));
    ex.run();
    ASSERT_EQ(test::scalarOf(ex, "found_inf"), 0) << level;
    std::vector<float> updated =
        test::valuesOf(ex, plan.find("w.master") >= 0 ? "w.master" : "w");
    std::vector<float> after = test::valuesOf(ex, "w.ema");
    for (size_t i = 0; i < after.size(); ++i) {
      ASSERT_NE(updated[i], master[i]);
      ASSERT_NEAR(after[i], master[i] + 0.25 * (updated[i] - master[i]), 1e-6) << level;
    }
  }
}

} // namespace
