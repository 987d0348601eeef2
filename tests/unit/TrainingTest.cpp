// Loss scaling and optimizer semantics: Paddle's update_loss_scaling op
// tests, PyTorch's GradScaler sequence, f16 gradient underflow recovered by
// dynamic scaling, an injected inf that skips the step and backs off, the
// finite check, unscale folding changing no bit, and the AMP pass refusing a
// training graph.
#include <cmath>
#include <cstring>
#include <map>

#include "compiler/GraphBuilder.h"
#include "compiler/Layers.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "mlir/IR/MLIRContext.h"
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
      rt::Buffer b;
      b.id = plan.buffers.size();
      b.name = name;
      b.kind = kind;
      b.dtype = t;
      b.bytes = rt::dtypeSize(t);
      b.init = {{"kind", "constant"}, {"value", init}};
      plan.buffers.push_back(b);
      return b.id;
    };
    int found = scalar("found_inf", rt::BufferKind::Input, rt::DType::I1, 0);
    int s = scalar("scale", rt::BufferKind::Param, rt::DType::F32, scale);
    int g = scalar("good", rt::BufferKind::Param, rt::DType::F32, good);
    int b = scalar("bad", rt::BufferKind::Param, rt::DType::F32, bad);
    plan.inputs = {found};
    plan.steps.push_back({"update", "update_loss_scaling", {found, s, g, b}, {}, attrs});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
  }
  float get(const char *name) { return *ex->tensor(name).as<float>(); }
  void step(bool inf) {
    *ex->tensor("found_inf").as<uint8_t>() = inf;
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
    rt::fromF32(xs.data(), ex->tensor("x").data, rt::DType::F32, xs.size());
    std::memset(ex->tensor("t").data, 0, 32 * 64 * 4);
    float lr = 3e5f; // the true gradients are ~1e-8: the loss is scaled down by factor^2
    rt::fromF32(&lr, ex->tensor("lr").data, rt::DType::F32, 1);
  }
  float loss() { return *ex->tensor("loss").as<float>(); }
  std::vector<float> weights() {
    float *w = ex->tensor("w").as<float>();
    return std::vector<float>(w, w + 64 * 64);
  }
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
  float lr = 1e-3f;
  rt::fromF32(&lr, t.ex->tensor("lr").data, rt::DType::F32, 1);
  std::vector<float> before = t.weights();
  t.ex->tensor("x").as<float>()[5] = INFINITY;
  t.ex->run();
  EXPECT_TRUE(*t.ex->tensor("found_inf").as<uint8_t>());
  EXPECT_EQ(t.weights(), before) << "a skipped step changes no param";
  EXPECT_EQ(*t.ex->tensor("loss_scale").as<float>(), 32768.0f);
  EXPECT_EQ(*t.ex->tensor("loss_scale.bad").as<float>(), 0.0f);
  t.ex->tensor("x").as<float>()[5] = 0.5f;
  t.ex->run();
  EXPECT_FALSE(*t.ex->tensor("found_inf").as<uint8_t>());
  EXPECT_NE(t.weights(), before);
  EXPECT_EQ(*t.ex->tensor("loss_scale.good").as<float>(), 1.0f);
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
  float *px = ex.tensor("x").as<float>();
  for (int i = 0; i < 128; ++i)
    px[i] = 0.01f * i;
  px[3] = INFINITY;
  std::vector<float> before(ex.tensor("mean").as<float>(), ex.tensor("mean").as<float>() + 8);
  ex.run();
  EXPECT_TRUE(*ex.tensor("found_inf").as<uint8_t>());
  EXPECT_EQ(std::vector<float>(ex.tensor("mean").as<float>(), ex.tensor("mean").as<float>() + 8),
            before);
  px[3] = 0.03f;
  ex.run();
  EXPECT_FALSE(*ex.tensor("found_inf").as<uint8_t>());
  EXPECT_NE(std::vector<float>(ex.tensor("mean").as<float>(), ex.tensor("mean").as<float>() + 8),
            before);
}

/// loss = sum((x @ w) * R): its gradient does not depend on w, so two plain
/// steps on x1 then x2 equal one accumulated step with the summed gradient.
rt::Plan linearLossPlan(mlir::MLIRContext &ctx, int64_t accumulate) {
  GraphBuilder b(ctx, "linear");
  Tensor x = b.input("x", {4, 8});
  Tensor w = b.param("w", {8, 8}, Init::normal(0.1));
  std::vector<double> r(32);
  for (size_t i = 0; i < r.size(); ++i)
    r[i] = 0.01 * double(i % 7) - 0.02;
  Tensor y = b.mul(b.matmul(x, w), b.constValue("R", {4, 8}, r));
  b.setLoss(b.reduceSum(y, {}, false, "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = "O0";
  TrainSettings train;
  train.accumulate = accumulate;
  runTrainingPipeline(*m, amp, train);
  return lowerToPlan(*m);
}

TEST(Training, AccumulationSumsMicroBatchGradients) {
  mlir::MLIRContext ctx;
  rt::Plan plain = linearLossPlan(ctx, 1), accumulated = linearLossPlan(ctx, 2);
  rt::Executor a(plain, {true, 4}), b(accumulated, {true, 4});
  float lr = 0.5f;
  for (rt::Executor *ex : {&a, &b})
    *ex->tensor("lr").as<float>() = lr;
  auto feed = [](rt::Executor &ex, float base) {
    float *x = ex.tensor("x").as<float>();
    for (int i = 0; i < 32; ++i)
      x[i] = base + 0.1f * i;
  };
  feed(a, 1.0f);
  a.run();
  feed(a, -2.0f);
  a.run();
  feed(b, 1.0f);
  b.run(/*apply=*/false, /*first=*/true);
  std::vector<float> between(b.tensor("w").as<float>(), b.tensor("w").as<float>() + 64);
  feed(b, -2.0f);
  b.run(/*apply=*/true, /*first=*/false);
  float *wa = a.tensor("w").as<float>(), *wb = b.tensor("w").as<float>();
  std::vector<float> init(64);
  rt::Executor fresh(plain, {true, 4});
  std::copy_n(fresh.tensor("w").as<float>(), 64, init.begin());
  EXPECT_EQ(between, init) << "no update before the window's last micro-batch";
  for (int i = 0; i < 64; ++i)
    EXPECT_NEAR(wa[i], wb[i], 1e-5f) << i;
  EXPECT_NE(std::vector<float>(wb, wb + 64), init);
  std::vector<float> acc(b.tensor("w.grad_acc").as<float>(), b.tensor("w.grad_acc").as<float>() + 64);
  EXPECT_EQ(acc, std::vector<float>(64, 0.0f)) << "the accumulator is reset after applying";
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
  plan.steps.push_back({"check", "check_finite", {a, h, bf}, {found}, rt::Json::object()});
  rt::planMemory(plan);
  rt::Executor ex(plan);
  auto fill = [&](const char *name, float v) {
    rt::TensorRef t = ex.tensor(name);
    std::vector<float> values(n, v);
    values[1] = 65504.0f;      // f16's largest finite
    values[2] = 5.96e-8f;      // an f16 subnormal
    values[3] = -1.0e-40f;     // an f32 subnormal
    rt::fromF32(values.data(), t.data, t.dtype, n);
  };
  auto check = [&] {
    ex.run();
    return *ex.tensor("found_inf").as<uint8_t>() != 0;
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
    rt::TensorRef t = ex.tensor(c.tensor);
    std::vector<char> saved((char *)t.data, (char *)t.data + t.bytes());
    rt::fromF32(&c.value, (char *)t.data + c.at * rt::dtypeSize(t.dtype), t.dtype, 1);
    EXPECT_TRUE(check()) << c.tensor << "[" << c.at << "] = " << c.value;
    std::copy(saved.begin(), saved.end(), (char *)t.data);
    EXPECT_FALSE(check());
  }
}

/// Trains a two-layer net for a few steps (one with an inf in the input) and
/// returns every persistent buffer's bytes: params, masters, moments, scale.
std::map<std::string, std::vector<char>> trainTwoLayers(const std::string &level,
                                                        const std::string &optimizer,
                                                        int64_t accumulate, bool foldUnscale,
                                                        std::vector<std::string> *kernels) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "two_layers");
  Tensor x = b.input("x", {16, 32});
  Tensor labels = b.input("labels", {16}, "i64");
  Tensor h = b.relu(linear(b, x, 32, "fc1"));
  b.setLoss(b.softmaxCrossEntropy(linear(b, h, 8, "fc2"), labels, "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = level;
  TrainSettings train;
  train.optimizer = optimizer;
  train.accumulate = accumulate;
  train.foldUnscale = foldUnscale;
  train.initLossScaling = 1024;
  runTrainingPipeline(*m, amp, train);
  rt::Plan plan = lowerToPlan(*m);
  for (const rt::Step &s : plan.steps)
    kernels->push_back(s.kernel);
  rt::Executor ex(plan, {true, 3});
  *ex.tensor("lr").as<float>() = 0.05f;
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int step = 0; step < 6; ++step) {
    float *px = ex.tensor("x").as<float>();
    for (int i = 0; i < 16 * 32; ++i)
      px[i] = dist(rng);
    if (step == 2)
      px[17] = INFINITY;
    for (int i = 0; i < 16; ++i)
      ex.tensor("labels").as<int64_t>()[i] = (i * 5 + step) % 8;
    bool last = (step + 1) % accumulate == 0, first = step % accumulate == 0;
    ex.run(last, first);
  }
  std::map<std::string, std::vector<char>> state;
  for (const rt::Buffer &buf : plan.buffers)
    if (buf.kind == rt::BufferKind::Param) {
      rt::TensorRef t = ex.tensor(buf.name);
      state[buf.name] = std::vector<char>((char *)t.data, (char *)t.data + t.bytes());
    }
  return state;
}

TEST(Training, FoldingTheUnscaleIntoTheUpdatesChangesNoBit) {
  struct Case {
    const char *level, *optimizer;
    int64_t accumulate;
  } cases[] = {{"O1", "sgd", 1}, {"O1", "momentum", 2}, {"O1", "adamw", 1},
               {"O2", "adam", 2}, {"O0", "sgd", 1}};
  for (const Case &c : cases) {
    std::vector<std::string> folded, unfolded;
    auto a = trainTwoLayers(c.level, c.optimizer, c.accumulate, true, &folded);
    auto b = trainTwoLayers(c.level, c.optimizer, c.accumulate, false, &unfolded);
    std::string what = std::string(c.level) + " " + c.optimizer;
    EXPECT_TRUE(llvm::is_contained(folded, "check_finite")) << what;
    EXPECT_FALSE(llvm::is_contained(folded, "check_finite_and_unscale")) << what;
    EXPECT_TRUE(llvm::is_contained(unfolded, "check_finite_and_unscale")) << what;
    ASSERT_EQ(a.size(), b.size()) << what;
    for (const auto &[name, bytes] : a)
      EXPECT_EQ(bytes, b[name]) << what << ": " << name;
    if (c.level != std::string("O0")) { // the step with an inf was skipped
      float scale;
      std::memcpy(&scale, a["loss_scale"].data(), 4);
      EXPECT_EQ(scale, 512.0f) << what;
    }
  }
}

/// Params after three O1 training steps of a zoo model, lowered with or
/// without fused casts; `casts` counts the plan's cast steps.
std::map<std::string, std::vector<char>> trainZoo(const std::string &model,
                                                  const std::map<std::string, std::string> &sets,
                                                  bool fuseCasts, int *casts) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, model, sets);
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Plan plan = lowerToPlan(*m, fuseCasts);
  *casts = llvm::count_if(plan.steps, [](const rt::Step &s) { return s.kernel == "cast"; });
  rt::Executor ex(plan, {true, 3});
  for (int id : plan.inputs) {
    rt::TensorRef t = ex.tensor(id);
    for (int64_t i = 0; i < t.size(); ++i)
      if (t.dtype == rt::DType::F32)
        t.as<float>()[i] = 0.01f * float((i * 37) % 101);
      else if (t.dtype == rt::DType::I64)
        t.as<int64_t>()[i] = i % 10;
  }
  *ex.tensor("lr").as<float>() = 0.05f;
  for (int step = 0; step < 3; ++step)
    ex.run();
  std::map<std::string, std::vector<char>> state;
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param) {
      rt::TensorRef t = ex.tensor(b.id);
      state[b.name] = std::vector<char>((char *)t.data, (char *)t.data + t.bytes());
    }
  return state;
}

TEST(Training, CastsFusedIntoMatmulAndConvChangeNoBit) {
  for (auto [model, sets] : std::vector<std::pair<std::string, std::map<std::string, std::string>>>{
           {"mlp", {}}, {"mnist_cnn", {{"batch", "8"}}}}) {
    int fusedCasts = 0, casts = 0;
    auto fused = trainZoo(model, sets, true, &fusedCasts);
    auto plain = trainZoo(model, sets, false, &casts);
    EXPECT_LT(fusedCasts, casts) << model;
    ASSERT_EQ(fused.size(), plain.size());
    for (const auto &[name, bytes] : fused)
      EXPECT_EQ(bytes, plain[name]) << model << ": " << name;
  }
}

/// One SGD step (lr 1) of a small BERT at `level`: every param's change.
std::map<std::string, std::vector<float>> bertStep(const std::string &level) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "bert", {{"layers", "1"}, {"batch", "2"}, {"seq", "8"},
                                    {"vocab", "64"}, {"hidden", "32"}, {"heads", "2"}});
  AmpSettings amp;
  amp.level = level;
  runTrainingPipeline(*m, amp, TrainSettings{});
  rt::Plan plan = lowerToPlan(*m);
  rt::Executor ex(plan, {true, 7});
  for (int id : plan.inputs) {
    rt::TensorRef t = ex.tensor(id);
    for (int64_t i = 0; i < t.size(); ++i)
      if (t.dtype == rt::DType::I64)
        t.as<int64_t>()[i] = (i * 7 + 3) % 64;
      else if (t.dtype == rt::DType::I32)
        t.as<int32_t>()[i] = (i * 7 + 3) % 64;
  }
  *ex.tensor("lr").as<float>() = 1.0f;
  std::map<std::string, std::vector<float>> before, delta;
  auto read = [&](const rt::Buffer &b) {
    rt::TensorRef t = ex.tensor(b.id);
    std::vector<float> v(t.size());
    rt::toF32(t.data, t.dtype, v.data(), v.size());
    return v;
  };
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && b.trainable)
      before[b.name] = read(b);
  ex.run();
  EXPECT_FALSE(*ex.tensor("found_inf").as<uint8_t>());
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && b.trainable) {
      std::vector<float> after = read(b);
      for (size_t i = 0; i < after.size(); ++i)
        after[i] -= before[b.name][i];
      delta[b.name] = after;
    }
  return delta;
}

TEST(Training, O1GradientsOfBertAgreeWithO0) {
  // O1 recomputes the attention probabilities from the f16 scores in the
  // backward; its gradients must still be O0's within f16 rounding.
  // (The key bias's gradient is zero in exact arithmetic: softmax ignores a
  // constant per row. It is compared against the largest change.)
  auto o0 = bertStep("O0"), o1 = bertStep("O1");
  double largest = 0;
  for (const auto &[name, d0] : o0) {
    double norm = 0;
    for (float v : d0)
      norm += double(v) * v;
    largest = std::max(largest, std::sqrt(norm));
  }
  ASSERT_GT(largest, 0.0);
  for (const auto &[name, d0] : o0) {
    ASSERT_TRUE(o1.count(name)) << name;
    const std::vector<float> &d1 = o1[name];
    double norm = 0, gap = 0;
    for (size_t i = 0; i < d0.size(); ++i) {
      norm += double(d0[i]) * d0[i];
      gap += double(d0[i] - d1[i]) * (d0[i] - d1[i]);
    }
    EXPECT_LT(std::sqrt(gap), 0.02 * std::sqrt(norm) + 1e-4 * largest) << name;
  }
}

TEST(Training, TheAmpPassRefusesATrainingGraph) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "g");
  Tensor x = b.input("x", {4, 8});
  b.setLoss(b.reduceMean(b.matmul(x, b.param("w", {8, 8}, Init::zeros())), {}, false, "loss"));
  auto m = b.finish();
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  EXPECT_GRAPH_ERROR(runAmpPipeline(*m, AmpSettings{}),
                     "the AMP pass takes forward graphs");
}

} // namespace
