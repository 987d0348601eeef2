// Training semantics: gradient accumulation, unscale folding and fused casts
// changing no bit, O1 gradients agreeing with O0 on BERT, and the AMP pass
// refusing a training graph.
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
  test::dumpCudaPlan(*m);
  return lowerToPlan(*m);
}

TEST(Training, AccumulationSumsMicroBatchGradients) {
  mlir::MLIRContext ctx;
  rt::Plan plain = linearLossPlan(ctx, 1), accumulated = linearLossPlan(ctx, 2);
  rt::Executor a(plain, {true, 4}), b(accumulated, {true, 4});
  for (rt::Executor *ex : {&a, &b})
    ex->writeScalar(ex->id("lr"), 0.5);
  auto feed = [](rt::Executor &ex, float base) {
    std::vector<float> x(32);
    for (int i = 0; i < 32; ++i)
      x[i] = base + 0.1f * i;
    ex.writeF32(ex.id("x"), x);
  };
  feed(a, 1.0f);
  a.run();
  feed(a, -2.0f);
  a.run();
  feed(b, 1.0f);
  b.run(/*apply=*/false, /*first=*/true);
  std::vector<float> between = test::valuesOf(b, "w");
  feed(b, -2.0f);
  b.run(/*apply=*/true, /*first=*/false);
  std::vector<float> wa = test::valuesOf(a, "w"), wb = test::valuesOf(b, "w");
  rt::Executor fresh(plain, {true, 4});
  std::vector<float> init = test::valuesOf(fresh, "w");
  EXPECT_EQ(between, init) << "no update before the window's last micro-batch";
  for (int i = 0; i < 64; ++i)
    EXPECT_NEAR(wa[i], wb[i], 1e-5f) << i;
  EXPECT_NE(wb, init);
  EXPECT_EQ(test::valuesOf(b, "w.grad_acc"), std::vector<float>(64, 0.0f))
      << "the accumulator is reset after applying";
}

/// Trains a two-layer net for a few steps (one with an inf in the input) and
/// returns every persistent buffer's bytes: params, masters, moments, scale.
/// Its widths are odd, so that the device's passes that take four elements a
/// load also take their last elements one at a time (the plans run on the
/// GPU: scripts/gpu-check.sh).
std::map<std::string, std::vector<char>> trainTwoLayers(const std::string &level,
                                                        const std::string &optimizer,
                                                        int64_t accumulate, bool foldUnscale,
                                                        std::vector<std::string> *kernels) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "two_layers");
  Tensor x = b.input("x", {16, 33});
  Tensor labels = b.input("labels", {16}, "i64");
  Tensor h = b.relu(linear(b, x, 37, "fc1"));
  b.setLoss(b.softmaxCrossEntropy(linear(b, h, 7, "fc2"), labels, "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = level;
  TrainSettings train;
  train.optimizer = optimizer;
  train.accumulate = accumulate;
  train.foldUnscale = foldUnscale;
  train.initLossScaling = 1024;
  runTrainingPipeline(*m, amp, train);
  test::dumpCudaPlan(*m);
  rt::Plan plan = lowerToPlan(*m);
  for (const rt::Step &s : plan.steps)
    kernels->push_back(rt::kernelName(s.kernel));
  rt::Executor ex(plan, {true, 3});
  ex.writeScalar(ex.id("lr"), 0.05f);
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int step = 0; step < 6; ++step) {
    std::vector<float> x(16 * 33);
    for (float &v : x)
      v = dist(rng);
    if (step == 2)
      x[17] = INFINITY;
    ex.writeF32(ex.id("x"), x);
    std::vector<double> labels(16);
    for (int i = 0; i < 16; ++i)
      labels[i] = (i * 5 + step) % 7;
    test::setValues(ex, "labels", labels);
    bool last = (step + 1) % accumulate == 0, first = step % accumulate == 0;
    ex.run(last, first);
  }
  return test::paramBytes(plan, ex);
}

TEST(Training, FoldingTheUnscaleIntoTheUpdatesChangesNoBit) {
  struct Case {
    const char *level, *optimizer;
    int64_t accumulate;
  } cases[] = {{"O1", "sgd", 1}, {"O1", "momentum", 2}, {"O1", "adamw", 1},
               {"O2", "adam", 2}, {"O0", "sgd", 1},     {"O1", "lamb", 1},
               {"O2", "lamb", 2}, {"O1", "lion", 1}};
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
  rt::Target target = rt::cpuTarget();
  target.fusedCasts = fuseCasts;
  rt::Plan plan = lowerToPlan(*m, target);
  *casts = llvm::count_if(plan.steps, [](const rt::Step &s) { return s.kernel == rt::Kernel::Cast; });
  rt::Executor ex(plan, {true, 3});
  for (int id : plan.inputs) {
    const rt::Buffer &b = plan.buffers[id];
    std::vector<double> values(rt::numElements(b.shape));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = b.dtype == rt::DType::F32 ? 0.01f * float((i * 37) % 101) : i % 10;
    test::setValues(ex, b.name, values);
  }
  ex.writeScalar(ex.id("lr"), 0.05f);
  for (int step = 0; step < 3; ++step)
    ex.run();
  return test::paramBytes(plan, ex);
}

// Fused casts (the CPU target: readers round f32 weights) against weight
// copies (targets without fused casts: f16 copies that the updates rewrite).
// The mlp's input cast is read only by GEMMs, which round it as they read
// the input; mnist_cnn's is read by the filter gradient too, which does not
// round, so it is a step either way.
TEST(Training, CastsFusedIntoMatmulAndConvChangeNoBit) {
  for (auto [model, sets, foldsInputCast] :
       std::vector<std::tuple<std::string, std::map<std::string, std::string>, bool>>{
           {"mlp", {}, true}, {"mnist_cnn", {{"batch", "8"}}, false}}) {
    int fusedCasts = 0, casts = 0;
    auto fused = trainZoo(model, sets, true, &fusedCasts);
    auto copies = trainZoo(model, sets, false, &casts);
    EXPECT_EQ(fusedCasts + (foldsInputCast ? 1 : 0), casts)
        << model << ": the input's cast is a step without fused casts";
    ASSERT_GT(copies.size(), fused.size()) << model << ": the copies are params of their own";
    for (const auto &[name, bytes] : fused)
      EXPECT_EQ(bytes, copies[name]) << model << ": " << name;
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
  test::dumpCudaPlan(*m);
  rt::Plan plan = lowerToPlan(*m);
  rt::Executor ex(plan, {true, 7});
  for (int id : plan.inputs) {
    const rt::Buffer &b = plan.buffers[id];
    if (b.dtype != rt::DType::I64 && b.dtype != rt::DType::I32)
      continue;
    std::vector<double> ids(rt::numElements(b.shape));
    for (size_t i = 0; i < ids.size(); ++i)
      ids[i] = (i * 7 + 3) % 64;
    test::setValues(ex, b.name, ids);
  }
  ex.writeScalar(ex.id("lr"), 1.0);
  std::map<std::string, std::vector<float>> before, delta;
  auto read = [&](const rt::Buffer &b) { return ex.readF32(b.id); };
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && b.trainable)
      before[b.name] = read(b);
  ex.run();
  EXPECT_FALSE(test::scalarOf(ex, "found_inf"));
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
