// RMSprop's and Adagrad's steps on the CPU (docs/training.md, "Optimizers")
// against their formulas as PyTorch writes them, computed here in f64 and
// rounded where the update rounds: bit for bit, with L2 decay, a
// grad_scale and the param's f16 copy; RMSprop with momentum and centered,
// a variance estimate below 0 held at 0; a skipped step.
#include <cmath>

#include "runtime/core/MemoryPlanner.h"
#include "runtime/numerics/Half.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

constexpr int64_t kSize = 10000; // three of the CPU kernel's chunks, the last one short

/// One update step of `kernel` over an f32 param [kSize] from inputs g, lr,
/// found_inf and grad_scale (4 on every step), rewriting an f16 copy; the
/// states named in `states` (rmsprop: v, then buf and avg where `attrs` has
/// momentum and centered; adagrad: sum).
struct UpdatePlan {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  UpdatePlan(rt::Kernel kernel, rt::Json attrs, std::vector<const char *> states) {
    using K = rt::BufferKind;
    auto buffer = [&](const char *name, K kind, rt::DType t, std::vector<int64_t> shape) {
      return test::addBuffer(plan, name, kind, t, shape);
    };
    std::vector<int> operands = {buffer("p", K::Param, rt::DType::F32, {kSize}),
                                 buffer("g", K::Input, rt::DType::F32, {kSize}),
                                 buffer("lr", K::Input, rt::DType::F32, {}),
                                 buffer("found_inf", K::Input, rt::DType::I1, {})};
    plan.inputs = {operands[1], operands[2], operands[3]};
    for (const char *state : states)
      operands.push_back(buffer(state, K::Param, rt::DType::F32, {kSize}));
    operands.push_back(buffer("grad_scale", K::Input, rt::DType::F32, {}));
    plan.inputs.push_back(operands.back());
    operands.push_back(buffer("p.f16", K::Param, rt::DType::F16, {kSize}));
    attrs["writes_copy"] = true;
    plan.steps.push_back({"update", kernel, operands, {}, attrs});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
    ex->writeScalar(ex->id("found_inf"), 0.0);
    ex->writeScalar(ex->id("grad_scale"), 4.0f);
  }

  /// One step from gradient g (given unscaled; the plan reads it times 4).
  void step(std::vector<float> g, float lr) {
    for (float &x : g)
      x *= 4.0f;
    ex->writeF32(ex->id("g"), g);
    ex->writeScalar(ex->id("lr"), lr);
    ex->run();
  }
};

std::vector<float> pattern(float scale, int shift) {
  return test::updatePattern(kSize, scale, shift);
}

void expectCopyIsTheParamsRounding(UpdatePlan &plan) {
  std::vector<float> p = test::valuesOf(*plan.ex, "p"), copy = test::valuesOf(*plan.ex, "p.f16");
  for (int64_t i = 0; i < kSize; ++i)
    ASSERT_EQ(copy[i], num::f16ToF32(num::f32ToF16(p[i]))) << "element " << i;
}

TEST(Rmsprop, FollowsPyTorchsFormulaBitForBit) {
  const double alpha = 0.9, eps = 1e-3, decay = 0.01;
  UpdatePlan plan(rt::Kernel::Rmsprop, {{"alpha", alpha}, {"epsilon", eps}, {"weight_decay", decay}},
                  {"v"});
  std::vector<float> p = pattern(1.0f, 9), v(kSize, 0.0f);
  plan.ex->writeF32(plan.ex->id("p"), p);
  const float lr = 0.01f;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> g = pattern(t == 0 ? 0.0f : 0.4f, 13 * t);
    plan.step(g, lr);
    for (int64_t i = 0; i < kSize; ++i) {
      float gi = g[i] + float(decay) * p[i];
      v[i] = float(alpha * v[i] + (1 - alpha) * double(gi) * gi);
      p[i] -= float(lr * (gi / (std::sqrt(double(v[i])) + eps)));
    }
    ASSERT_EQ(test::valuesOf(*plan.ex, "p"), p) << "step " << t;
    ASSERT_EQ(test::valuesOf(*plan.ex, "v"), v) << "step " << t;
  }
  expectCopyIsTheParamsRounding(plan);
}

TEST(Rmsprop, WithMomentumAndCenteredFollowsPyTorchsFormulaBitForBit) {
  const double alpha = 0.99, eps = 1e-8, momentum = 0.9;
  UpdatePlan plan(rt::Kernel::Rmsprop, {{"momentum", momentum}, {"centered", true}},
                  {"v", "buf", "avg"});
  std::vector<float> p = pattern(0.5f, 2), v(kSize), buf(kSize), avg(kSize);
  plan.ex->writeF32(plan.ex->id("p"), p);
  const float lr = 0.002f;
  for (int t = 0; t < 4; ++t) {
    std::vector<float> g = pattern(0.3f + 0.2f * t, 5 * t);
    plan.step(g, lr);
    for (int64_t i = 0; i < kSize; ++i) {
      v[i] = float(alpha * v[i] + (1 - alpha) * double(g[i]) * g[i]);
      avg[i] = float(alpha * avg[i] + (1 - alpha) * g[i]);
      double variance = std::max(0.0, v[i] - double(avg[i]) * avg[i]);
      buf[i] = float(momentum * buf[i] + g[i] / (std::sqrt(variance) + eps));
      p[i] -= float(lr * double(buf[i]));
    }
    ASSERT_EQ(test::valuesOf(*plan.ex, "p"), p) << "step " << t;
    ASSERT_EQ(test::valuesOf(*plan.ex, "buf"), buf) << "step " << t;
    ASSERT_EQ(test::valuesOf(*plan.ex, "avg"), avg) << "step " << t;
  }
  expectCopyIsTheParamsRounding(plan);
}

TEST(Rmsprop, AVarianceEstimateBelowZeroIsHeldAtZero) {
  // v 0 and avg 1, a zero gradient: v - avg^2 is -0.9801. PyTorch's sqrt
  // gives NaN; here the denominator is epsilon and the step 0 / epsilon.
  UpdatePlan plan(rt::Kernel::Rmsprop, {{"centered", true}}, {"v", "avg"});
  plan.ex->writeF32(plan.ex->id("p"), pattern(1.0f, 0));
  plan.ex->writeF32(plan.ex->id("avg"), std::vector<float>(kSize, 1.0f));
  plan.step(std::vector<float>(kSize, 0.0f), 0.1f);
  EXPECT_EQ(test::valuesOf(*plan.ex, "p"), pattern(1.0f, 0));
  EXPECT_EQ(test::valuesOf(*plan.ex, "avg"), std::vector<float>(kSize, 0.99f));
}

TEST(Rmsprop, ASkippedStepChangesNothing) {
  UpdatePlan plan(rt::Kernel::Rmsprop, {{"momentum", 0.5}, {"centered", true}},
                  {"v", "buf", "avg"});
  plan.ex->writeF32(plan.ex->id("p"), pattern(1.0f, 1));
  plan.ex->writeScalar(plan.ex->id("found_inf"), 1.0);
  plan.step(pattern(1.0f, 2), 0.1f);
  EXPECT_EQ(test::valuesOf(*plan.ex, "p"), pattern(1.0f, 1));
  for (const char *state : {"v", "buf", "avg"})
    EXPECT_EQ(test::valuesOf(*plan.ex, state), std::vector<float>(kSize, 0.0f)) << state;
}

TEST(Adagrad, FollowsPyTorchsFormulaBitForBit) {
  // From Keras's initial accumulator 0.1, with L2 decay; the sum and the
  // step in f64, each rounded once.
  const double eps = 1e-10, decay = 0.05;
  UpdatePlan plan(rt::Kernel::Adagrad, {{"weight_decay", decay}}, {"sum"});
  std::vector<float> p = pattern(2.0f, 4), sum(kSize, 0.1f);
  plan.ex->writeF32(plan.ex->id("p"), p);
  plan.ex->writeF32(plan.ex->id("sum"), sum);
  const float lr = 0.05f;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> g = pattern(0.7f, 3 * t + 1);
    plan.step(g, lr);
    for (int64_t i = 0; i < kSize; ++i) {
      float gi = g[i] + float(decay) * p[i];
      sum[i] = float(sum[i] + double(gi) * gi);
      p[i] -= float(lr * (gi / (std::sqrt(double(sum[i])) + eps)));
    }
    ASSERT_EQ(test::valuesOf(*plan.ex, "p"), p) << "step " << t;
    ASSERT_EQ(test::valuesOf(*plan.ex, "sum"), sum) << "step " << t;
  }
  expectCopyIsTheParamsRounding(plan);
}

} // namespace
