// Loss-scaling semantics: Paddle's update_loss_scaling op tests, PyTorch's
// GradScaler sequence, f16 gradient underflow recovered by dynamic scaling,
// an injected inf that skips the step and backs off, a skipped step leaving
// batch norm's statistics alone, and the finite check in every dtype.
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

/// A plan of one update_loss_scaling step over a flag input and scalar state.
struct ScalingPlan {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  ScalingPlan(double scale, double good, double bad, rt::Json attrs) {
    auto scalar = [&](const char *name, rt::BufferKind kind, rt::DType t, double init) {
      return test::addBuffer(plan, name, kind, t, {}, init);
    };
    int found = scalar("found_inf", rt::BufferKind::Input, rt::DType::I1, 0);
    int s = scalar("scale", rt::BufferKind::Param, rt::DType::F32, scale);
    int g = scalar("good", rt::BufferKind::Param, rt::DType::F32, good);
    int b = scalar("bad", rt::BufferKind::Param, rt::DType::F32, bad);
    plan.inputs = {found};
    plan.steps.push_back({"update", rt::Kernel::UpdateLossScaling, {found, s, g, b}, {}, attrs});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
  }
  float get(const char *name) { return (float)test::scalarOf(*ex, name); }
  void step(bool inf) {
    ex->writeScalar(ex->id("found_inf"), inf);
    ex->run();
  }
};

TEST(LossScaling, PaddleIncreasesAfterGoodSteps) {
  ScalingPlan p(2048, 999, 0, {{"incr_every_n_steps", 1000}, {"decr_every_n_nan_or_inf", 2},
                               {"incr_ratio", 2.0}, {"decr_ratio", 0.8}});
  p.step(false);
  EXPECT_EQ(p.get("scale"), 4096.0f);
  EXPECT_EQ(p.get("good"), 0.0f);
  EXPECT_EQ(p.get("bad"), 0.0f);
}

TEST(LossScaling, PaddleDecreasesAfterBadSteps) {
  ScalingPlan p(2048, 0, 1, {{"incr_every_n_steps", 1000}, {"decr_every_n_nan_or_inf", 2},
                             {"incr_ratio", 2.0}, {"decr_ratio", 0.8}});
  p.step(true);
  EXPECT_FLOAT_EQ(p.get("scale"), 1638.4f);
  EXPECT_EQ(p.get("good"), 0.0f);
  EXPECT_EQ(p.get("bad"), 0.0f);
}

TEST(LossScaling, GradScalerSequence) {
  // growth 2, backoff 0.25, growth interval 2, initial scale 4.
  ScalingPlan p(4, 0, 0, {{"incr_every_n_steps", 2}, {"decr_every_n_nan_or_inf", 1},
                          {"incr_ratio", 2.0}, {"decr_ratio", 0.25}});
  std::vector<float> scales;
  for (bool inf : {false, false, true}) {
    p.step(inf);
    scales.push_back(p.get("scale"));
  }
  EXPECT_EQ(scales, (std::vector<float>{4, 8, 2}));
}

TEST(LossScaling, StaticScaleStaysAndNeverGoesBelowOne) {
  ScalingPlan fixed(1024, 0, 0, {{"incr_every_n_steps", 1}, {"dynamic", false}});
  fixed.step(false);
  fixed.step(true);
  EXPECT_EQ(fixed.get("scale"), 1024.0f);
  ScalingPlan low(1.5, 0, 0, {{"decr_ratio", 0.5}});
  low.step(true);
  EXPECT_EQ(low.get("scale"), 1.0f);
}

/// A training step of y = x @ w (f16 at O1) scaled down so that its f16
/// gradients underflow, with an MSE loss against zeros.
struct TinyTraining {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  TinyTraining(const std::string &scaling, double factor) {
    mlir::MLIRContext ctx;
    GraphBuilder b(ctx, "tiny");
    Tensor x = b.input("x", {32, 64});
    Tensor t = b.input("t", {32, 64});
    Tensor w = b.param("w", {64, 64}, Init::normal(0.05));
    Tensor y = b.scale(b.matmul(x, w, false, false, "mm"), factor, 0.0, "small");
    b.setLoss(b.mseLoss(y, t, "loss"));
    auto m = b.finish();
    AmpSettings amp;
    TrainSettings train;
    train.lossScaling = scaling;
    runTrainingPipeline(*m, amp, train);
    plan = lowerToPlan(*m);
    ex = std::make_unique<rt::Executor>(plan, rt::ExecOptions{true, 1});
    std::mt19937 rng(2);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    std::vector<float> xs(32 * 64);
    for (float &v : xs)
      v = dist(rng);
    ex->writeF32(ex->id("x"), xs);
    ex->writeF32(ex->id("t"), std::vector<float>(32 * 64, 0.0f));
    // The true gradients are ~1e-8: the loss is scaled down by factor^2.
    ex->writeScalar(ex->id("lr"), 3e5f);
  }
  float loss() { return (float)test::scalarOf(*ex, "loss"); }
  std::vector<float> weights() { return test::valuesOf(*ex, "w"); }
};

TEST(LossScaling, DynamicScalingRecoversUnderflowingF16Gradients) {
  // d loss / d y is about 1e-6, times the 3e-3 of the scale node: 4e-9 in
  // f16 is zero; with S = 65536 it is 2.4e-4, a normal f16.
  TinyTraining none("none", 3e-3), dynamic("dynamic", 3e-3);
  std::vector<float> before = none.weights();
  none.ex->run();
  float first = none.loss();
  none.ex->run();
  EXPECT_EQ(none.weights(), before) << "without scaling the f16 gradients are all zero";
  EXPECT_EQ(none.loss(), first);

  dynamic.ex->run();
  float start = dynamic.loss();
  for (int i = 0; i < 20; ++i)
    dynamic.ex->run();
  EXPECT_NE(dynamic.weights(), before);
  EXPECT_LT(dynamic.loss(), 0.9f * start) << "the loss goes down with dynamic scaling";
}

TEST(LossScaling, AnInjectedInfSkipsTheStepAndBacksOff) {
  TinyTraining t("dynamic", 1.0);
  rt::Executor &ex = *t.ex;
  ex.writeScalar(ex.id("lr"), 1e-3f);
  std::vector<float> before = t.weights(), x = test::valuesOf(ex, "x");
  x[5] = INFINITY;
  ex.writeF32(ex.id("x"), x);
  ex.run();
  EXPECT_TRUE(test::scalarOf(ex, "found_inf"));
  EXPECT_EQ(t.weights(), before) << "a skipped step changes no param";
  EXPECT_EQ(test::scalarOf(ex, "loss_scale"), 32768.0);
  EXPECT_EQ(test::scalarOf(ex, "loss_scale.bad"), 0.0);
  EXPECT_EQ(ex.readScalar(ex.plan().skippedSteps), 1.0) << "the plan counts skipped steps";
  x[5] = 0.5f;
  ex.writeF32(ex.id("x"), x);
  ex.run();
  EXPECT_FALSE(test::scalarOf(ex, "found_inf"));
  EXPECT_NE(t.weights(), before);
  EXPECT_EQ(test::scalarOf(ex, "loss_scale.good"), 1.0);
  EXPECT_EQ(ex.readScalar(ex.plan().skippedSteps), 1.0);
}

TEST(LossScaling, ASkippedStepLeavesBatchNormStatisticsAlone) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "bn");
  Tensor x = b.input("x", {4, 2, 2, 8});
  Tensor h = b.conv2d(x, b.param("f", {8, 1, 1, 8}, Init::kaimingNormal()));
  Tensor mean = b.param("mean", {8}, Init::zeros(), "f32", false);
  Tensor var = b.param("var", {8}, Init::ones(), "f32", false);
  h = b.batchNorm(h, b.param("scale", {8}, Init::ones()), b.param("bias", {8}, Init::zeros()),
                  mean, var);
  b.setLoss(b.reduceMean(b.cast(h, "f32"), {}, false, "loss"));
  auto m = b.finish();
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Plan plan = lowerToPlan(*m);
  rt::Executor ex(plan, {true, 1});
  std::vector<float> xs(128);
  for (int i = 0; i < 128; ++i)
    xs[i] = 0.01f * i;
  xs[3] = INFINITY;
  ex.writeF32(ex.id("x"), xs);
  std::vector<float> before = test::valuesOf(ex, "mean");
  ex.run();
  EXPECT_TRUE(test::scalarOf(ex, "found_inf"));
  EXPECT_EQ(test::valuesOf(ex, "mean"), before);
  xs[3] = 0.03f;
  ex.writeF32(ex.id("x"), xs);
  ex.run();
  EXPECT_FALSE(test::scalarOf(ex, "found_inf"));
  EXPECT_NE(test::valuesOf(ex, "mean"), before);
}

TEST(LossScaling, TheFiniteCheckSeesEveryNonFiniteValueInEveryDtype) {
  rt::Plan plan;
  int id = 0;
  auto buffer = [&](const char *name, rt::BufferKind kind, rt::DType t, int64_t n) {
    rt::Buffer b;
    b.id = id++;
    b.name = name;
    b.kind = kind;
    b.dtype = t;
    b.shape = {n};
    b.bytes = n * rt::dtypeSize(t);
    plan.buffers.push_back(b);
    return b.id;
  };
  const int64_t n = 70000; // above the parallel grain
  int a = buffer("a", rt::BufferKind::Input, rt::DType::F32, n);
  int h = buffer("h", rt::BufferKind::Input, rt::DType::F16, n);
  int bf = buffer("bf", rt::BufferKind::Input, rt::DType::BF16, n);
  int found = buffer("found_inf", rt::BufferKind::Temp, rt::DType::I1, 1);
  plan.buffers[found].shape = {};
  plan.inputs = {a, h, bf};
  plan.outputs = {found};
  plan.steps.push_back({"check", rt::Kernel::CheckFinite, {a, h, bf}, {found}, rt::Json::object()});
  rt::planMemory(plan);
  rt::Executor ex(plan);
  auto fill = [&](const char *name, float v) {
    std::vector<float> values(n, v);
    values[1] = 65504.0f;      // f16's largest finite
    values[2] = 5.96e-8f;      // an f16 subnormal
    values[3] = -1.0e-40f;     // an f32 subnormal
    ex.writeF32(ex.id(name), values);
  };
  auto check = [&] {
    ex.run();
    return test::scalarOf(ex, "found_inf") != 0;
  };
  for (const char *name : {"a", "h", "bf"})
    fill(name, 0.25f);
  EXPECT_FALSE(check());
  struct Case {
    const char *tensor;
    int64_t at;
    float value;
  } cases[] = {{"a", n - 1, INFINITY}, {"a", 0, NAN},      {"h", n - 1, -INFINITY},
               {"h", 5, NAN},          {"bf", n - 1, NAN}, {"bf", 7, INFINITY}};
  for (const Case &c : cases) {
    int tensor = ex.id(c.tensor);
    rt::DType dtype = plan.buffers[tensor].dtype;
    std::vector<std::byte> saved = ex.readBytes(tensor), changed = saved;
    rt::fromF32(&c.value, changed.data() + c.at * rt::dtypeSize(dtype), dtype, 1);
    ex.write(tensor, changed.data(), changed.size());
    EXPECT_TRUE(check()) << c.tensor << "[" << c.at << "] = " << c.value;
    ex.write(tensor, saved.data(), saved.size());
    EXPECT_FALSE(check());
  }
}

} // namespace
