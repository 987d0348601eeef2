// The optimizers PyTorch lacks (docs/training.md, "Optimizers"), their
// steps on the CPU. LAMB against the formula computed in f64, over a param
// of several chunks; the trust ratio off (`adapt` false) and at a zero
// param; a skipped step; a grad_scale; the param's f16 copy. Lion against
// its formula bit for bit, a zero direction included.
#include <cmath>

#include "runtime/core/MemoryPlanner.h"
#include "runtime/numerics/Half.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

constexpr int64_t kSize = 10000; // three of the CPU kernel's chunks, the last one short

/// One update step of `kernel` (lamb or lion; weight decay `decay`) over
/// an f32 param [kSize] with f32 moments, from inputs g, lr and found_inf;
/// with `scaled` a grad_scale input, with `copy` an f16 copy of the param
/// that the step rewrites.
struct UpdatePlan {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  UpdatePlan(rt::Kernel kernel, double decay, bool adapt, bool scaled = false,
             bool copy = false) {
    rt::Json attrs = {{"weight_decay", decay}};
    if (kernel == rt::Kernel::Lamb)
      attrs["adapt"] = adapt;
    auto buffer = [&](const char *name, rt::BufferKind kind, rt::DType t,
                      std::vector<int64_t> shape) {
      return test::addBuffer(plan, name, kind, t, shape);
    };
    using K = rt::BufferKind;
    int p = buffer("p", K::Param, rt::DType::F32, {kSize});
    int g = buffer("g", K::Input, rt::DType::F32, {kSize});
    int lr = buffer("lr", K::Input, rt::DType::F32, {});
    int found = buffer("found_inf", K::Input, rt::DType::I1, {});
    int m = buffer("m", K::Param, rt::DType::F32, {kSize});
    std::vector<int> operands = {p, g, lr, found, m};
    int step = buffer("step", K::Param, rt::DType::F32, {});
    if (kernel == rt::Kernel::Lamb)
      operands.insert(operands.end(), {buffer("v", K::Param, rt::DType::F32, {kSize}), step});
    plan.inputs = {g, lr, found};
    if (scaled) {
      operands.push_back(buffer("grad_scale", K::Input, rt::DType::F32, {}));
      plan.inputs.push_back(operands.back());
    }
    if (copy) {
      operands.push_back(buffer("p.f16", K::Param, rt::DType::F16, {kSize}));
      attrs["writes_copy"] = true;
    }
    plan.steps.push_back({"count", rt::Kernel::CountStep, {step, found}, {}, rt::Json::object()});
    plan.steps.push_back({"update", kernel, operands, {}, attrs});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
  }
};

std::vector<float> pattern(float scale, int shift) {
  return test::updatePattern(kSize, scale, shift);
}

/// LAMB in f64 from the same start: its params after the given gradients.
std::vector<double> reference(std::vector<double> p, const std::vector<std::vector<float>> &grads,
                              double lr, double decay, bool adapt) {
  const double b1 = 0.9, b2 = 0.999, eps = 1e-6;
  std::vector<double> m(kSize), v(kSize), u(kSize);
  for (size_t t = 1; t <= grads.size(); ++t) {
    double pp = 0, uu = 0;
    for (int64_t i = 0; i < kSize; ++i) {
      double g = grads[t - 1][i];
      m[i] = b1 * m[i] + (1 - b1) * g;
      v[i] = b2 * v[i] + (1 - b2) * g * g;
      u[i] = (m[i] / (1 - std::pow(b1, t))) / (std::sqrt(v[i] / (1 - std::pow(b2, t))) + eps) +
             decay * p[i];
      pp += p[i] * p[i];
      uu += u[i] * u[i];
    }
    double ratio = adapt && pp > 0 && uu > 0 ? std::sqrt(pp) / std::sqrt(uu) : 1.0;
    for (int64_t i = 0; i < kSize; ++i)
      p[i] -= lr * ratio * u[i];
  }
  return p;
}

/// Runs `grads` through `plan` from param `start`, lr `lr`; the f64
/// reference's params within 1e-5 of the step's size.
void expectFollowsTheFormula(UpdatePlan &plan, const std::vector<float> &start, double lr,
                             double decay, bool adapt) {
  plan.ex->writeF32(plan.ex->id("p"), start);
  std::vector<std::vector<float>> grads = {pattern(0.5f, 3), pattern(-0.02f, 11), pattern(2.0f, 5)};
  plan.ex->writeScalar(plan.ex->id("lr"), float(lr));
  plan.ex->writeScalar(plan.ex->id("found_inf"), 0.0);
  for (const auto &g : grads) {
    plan.ex->writeF32(plan.ex->id("g"), g);
    plan.ex->run();
  }
  std::vector<double> want =
      reference(std::vector<double>(start.begin(), start.end()), grads, lr, decay, adapt);
  std::vector<float> got = test::valuesOf(*plan.ex, "p");
  for (int64_t i = 0; i < kSize; ++i)
    ASSERT_NEAR(got[i], want[i], 1e-5 * lr * 3 * (adapt ? 1.0 : 10.0)) << "element " << i;
  EXPECT_EQ(test::scalarOf(*plan.ex, "step"), 3);
}

TEST(Lamb, FollowsTheFormulaWithTheTrustRatio) {
  UpdatePlan plan(rt::Kernel::Lamb, 0.01, true);
  expectFollowsTheFormula(plan, pattern(0.05f, 0), 0.01, 0.01, true);
}

TEST(Lamb, WithoutAdaptTheRatioIsOne) {
  UpdatePlan plan(rt::Kernel::Lamb, 0.1, false);
  expectFollowsTheFormula(plan, pattern(3.0f, 7), 0.001, 0.1, false);
}

TEST(Lamb, AZeroParamTakesAdamsStep) {
  // ||p|| = 0: the ratio is 1, so the first step is Adam's (lr * sign(g)
  // where |g| >> epsilon); then the ratio applies.
  UpdatePlan plan(rt::Kernel::Lamb, 0.01, true);
  plan.ex->writeScalar(plan.ex->id("lr"), 0.01f);
  plan.ex->writeScalar(plan.ex->id("found_inf"), 0.0);
  plan.ex->writeF32(plan.ex->id("g"), std::vector<float>(kSize, 0.5f));
  plan.ex->run();
  for (float p : test::valuesOf(*plan.ex, "p"))
    ASSERT_NEAR(p, -0.01, 1e-7);
}

TEST(Lamb, ASkippedStepChangesNothing) {
  UpdatePlan plan(rt::Kernel::Lamb, 0.01, true);
  plan.ex->writeF32(plan.ex->id("p"), pattern(1.0f, 1));
  plan.ex->writeF32(plan.ex->id("g"), pattern(1.0f, 2));
  plan.ex->writeScalar(plan.ex->id("lr"), 0.1f);
  plan.ex->writeScalar(plan.ex->id("found_inf"), 1.0);
  plan.ex->run();
  EXPECT_EQ(test::valuesOf(*plan.ex, "p"), pattern(1.0f, 1));
  EXPECT_EQ(test::valuesOf(*plan.ex, "m"), std::vector<float>(kSize, 0.0f));
  EXPECT_EQ(test::scalarOf(*plan.ex, "step"), 0);
}

TEST(Lamb, AGradScaleAndACopyChangeNoBit) {
  // g * 1024 with grad_scale 1024 is g again, exactly; the f16 copy is the
  // param's rounding.
  UpdatePlan plain(rt::Kernel::Lamb, 0.01, true), scaled(rt::Kernel::Lamb, 0.01, true, true, true);
  for (UpdatePlan *plan : {&plain, &scaled}) {
    plan->ex->writeF32(plan->ex->id("p"), pattern(0.2f, 4));
    plan->ex->writeScalar(plan->ex->id("lr"), 0.05f);
    plan->ex->writeScalar(plan->ex->id("found_inf"), 0.0);
  }
  scaled.ex->writeScalar(scaled.ex->id("grad_scale"), 1024.0f);
  for (int t = 0; t < 2; ++t) {
    std::vector<float> g = pattern(0.3f, t), big = g;
    for (float &x : big)
      x *= 1024.0f;
    plain.ex->writeF32(plain.ex->id("g"), g);
    scaled.ex->writeF32(scaled.ex->id("g"), big);
    plain.ex->run();
    scaled.ex->run();
  }
  std::vector<float> p = test::valuesOf(*plain.ex, "p");
  ASSERT_EQ(p, test::valuesOf(*scaled.ex, "p"));
  std::vector<float> copy = test::valuesOf(*scaled.ex, "p.f16");
  for (int64_t i = 0; i < kSize; ++i)
    ASSERT_EQ(copy[i], num::f16ToF32(num::f32ToF16(p[i]))) << "element " << i;
}

TEST(Lion, FollowsTheFormulaBitForBit) {
  // Decay, then a step of lr against the sign of beta1 m + (1 - beta1) g
  // (none where that is 0: the first step's zero gradients), then the
  // moment; each rounded once to f32 as written.
  UpdatePlan plan(rt::Kernel::Lion, 0.1, true, true, true);
  std::vector<float> p = pattern(1.0f, 9), m(kSize, 0.0f);
  plan.ex->writeF32(plan.ex->id("p"), p);
  plan.ex->writeScalar(plan.ex->id("lr"), 0.003f);
  plan.ex->writeScalar(plan.ex->id("found_inf"), 0.0);
  plan.ex->writeScalar(plan.ex->id("grad_scale"), 4.0f);
  const float lr = 0.003f;
  for (int t = 0; t < 3; ++t) {
    std::vector<float> g = pattern(t == 0 ? 0.0f : 0.4f, 13 * t), scaled = g;
    for (float &x : scaled)
      x *= 4.0f;
    plan.ex->writeF32(plan.ex->id("g"), scaled);
    plan.ex->run();
    for (int64_t i = 0; i < kSize; ++i) {
      p[i] -= float(double(lr) * 0.1 * p[i]);
      double c = 0.9 * m[i] + (1 - 0.9) * g[i];
      if (c != 0.0)
        p[i] -= c > 0 ? lr : -lr;
      m[i] = float(0.99 * m[i] + (1 - 0.99) * g[i]);
    }
    ASSERT_EQ(test::valuesOf(*plan.ex, "p"), p) << "step " << t;
    ASSERT_EQ(test::valuesOf(*plan.ex, "m"), m) << "step " << t;
  }
  std::vector<float> copy = test::valuesOf(*plan.ex, "p.f16");
  for (int64_t i = 0; i < kSize; ++i)
    ASSERT_EQ(copy[i], num::f16ToF32(num::f32ToF16(p[i]))) << "element " << i;
}

} // namespace
