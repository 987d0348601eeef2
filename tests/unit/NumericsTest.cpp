// The shared numerics (runtime/numerics), which the CPU kernels call and the
// CUDA kernels will call, against f64 references: every element function's
// value and derivative, f16 rounding, the finite test and exp exhaustively
// over the f16 values; the optimizer updates, the loss-scale rule, the
// dropout bits against their definitions; a chain evaluated four elements
// at once against each element on its own.
#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "runtime/numerics/Activations.h"
#include "runtime/numerics/CrossEntropy.h"
#include "runtime/numerics/Erf.h"
#include "runtime/numerics/Exp.h"
#include "runtime/numerics/Finite.h"
#include "runtime/numerics/ElementChain.h"
#include "runtime/numerics/Half.h"
#include "runtime/numerics/LossScale.h"
#include "runtime/numerics/Optimizers.h"
#include "runtime/numerics/Random.h"

using namespace ampc::num;

namespace {

/// Every finite f16 value, widened to f32.
std::vector<float> finiteF16() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 65536; ++h)
    if (((h >> 10) & 0x1F) != 0x1F)
      v.push_back(f16ToF32(uint16_t(h)));
  return v;
}

/// One unit in the last place of f32 at `r` (of the smallest normal below it).
double ulpAt(double r) {
  float f = (float)std::fabs(r);
  if (!(f >= std::numeric_limits<float>::min()))
    return std::numeric_limits<float>::denorm_min();
  return std::nextafter(f, INFINITY) - f;
}

/// Checks f(x) against ref(x) for every x of `inputs` with ref finite:
/// within `ulps` of the reference, or within `absolute * max(1, |x|)`.
void expectClose(const char *what, const std::vector<float> &inputs,
                 const std::function<float(float)> &f, const std::function<double(double)> &ref,
                 double ulps, double absolute = 0) {
  int failures = 0;
  for (float x : inputs) {
    double r = ref(x);
    if (!std::isfinite(r) || std::fabs(r) > std::numeric_limits<float>::max())
      continue;
    double got = f(x), error = std::fabs(got - r);
    if (error <= ulps * ulpAt(r) || error <= absolute * std::max(1.0, std::fabs(double(x))))
      continue;
    if (++failures <= 3)
      ADD_FAILURE() << what << "(" << x << ") = " << got << ", f64 gives " << r << " ("
                    << error / ulpAt(r) << " ulp)";
  }
  EXPECT_EQ(failures, 0) << what;
}

std::vector<float> where(const std::vector<float> &v, const std::function<bool(float)> &keep) {
  std::vector<float> out;
  for (float x : v)
    if (keep(x))
      out.push_back(x);
  return out;
}

const double kSqrt2 = std::sqrt(2.0), kPi = std::acos(-1.0);

TEST(Numerics, ActivationValuesMatchF64OverEveryF16Input) {
  std::vector<float> all = finiteF16();
  auto positive = where(all, [](float x) { return x > 0; });
  expectClose("neg", all, [](float x) { return Neg{}.value(x); }, [](double x) { return -x; }, 0);
  expectClose("abs", all, [](float x) { return Abs{}.value(x); },
              [](double x) { return std::fabs(x); }, 0);
  expectClose("relu", all, [](float x) { return Relu{}.value(x); },
              [](double x) { return x > 0 ? x : 0.0; }, 0);
  expectClose("square", all, [](float x) { return Square{}.value(x); },
              [](double x) { return x * x; }, 0.5);
  expectClose("sqrt", positive, [](float x) { return Sqrt{}.value(x); },
              [](double x) { return std::sqrt(x); }, 0.5);
  expectClose("rsqrt", positive, [](float x) { return Rsqrt{}.value(x); },
              [](double x) { return 1 / std::sqrt(x); }, 1.5);
  expectClose("exp", where(all, [](float x) { return x > -87 && x < 88; }),
              [](float x) { return Exp{}.value(x); }, [](double x) { return std::exp(x); }, 1);
  expectClose("log", positive, [](float x) { return Log{}.value(x); },
              [](double x) { return std::log(x); }, 1);
  expectClose("tanh", all, [](float x) { return Tanh{}.value(x); },
              [](double x) { return std::tanh(x); }, 2);
  expectClose("erf", all, [](float x) { return Erf{}.value(x); },
              [](double x) { return std::erf(x); }, 3);
  // Up to 65504 rad: the argument reduction must keep the phase.
  expectClose("sin", all, [](float x) { return Sin{}.value(x); },
              [](double x) { return std::sin(x); }, 1);
  expectClose("cos", all, [](float x) { return Cos{}.value(x); },
              [](double x) { return std::cos(x); }, 1);
  // 1 / (1 + e^-x): three roundings; far left the result underflows.
  expectClose("sigmoid", all, [](float x) { return Sigmoid{}.value(x); },
              [](double x) { return 1 / (1 + std::exp(-x)); }, 3, 1e-37);
  // x * Phi(x), Phi from its tail: relative accuracy down to f32's smallest
  // normal (the reference is erfc's, which does not cancel either).
  expectClose("gelu", all, [](float x) { return Gelu{}.value(x); },
              [](double x) { return 0.5 * x * std::erfc(-x / kSqrt2); }, 7, 1e-37);
  // x / (1 + e^(-2u)): f32's rounding of u costs about ulp(u) * |2u|
  // relative, which the absolute term covers.
  expectClose("gelu_tanh", all, [](float x) { return GeluTanh{}.value(x); },
              [](double x) {
                return x / (1 + std::exp(-2 * std::sqrt(2 / kPi) * (x + 0.044715 * x * x * x)));
              },
              4, 2e-7);
  for (float e : {0.5f, 2.0f, 2.5f, 3.0f})
    expectClose("pow", positive, [e](float x) { return Pow{e}.value(x); },
                [e](double x) { return std::pow(x, double(e)); }, 1);
  expectClose("scale", all, [](float x) { return Scale{0.125f, 3.0f}.value(x); },
              [](double x) { return x * 0.125 + 3.0; }, 0.5);
}

TEST(Numerics, DerivativesMatchF64OverEveryF16Input) {
  std::vector<float> all = finiteF16();
  auto positive = where(all, [](float x) { return x > 0; });
  auto normal = where(positive, [](float x) { return x >= 6.103515625e-05f; });
  expectClose("relu'", all, [](float x) { return Relu{}.derivative(x, Relu{}.value(x)); },
              [](double x) { return x > 0 ? 1.0 : 0.0; }, 0);
  expectClose("abs'", all, [](float x) { return Abs{}.derivative(x, Abs{}.value(x)); },
              [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0; }, 0);
  expectClose("square'", all, [](float x) { return Square{}.derivative(x, x * x); },
              [](double x) { return 2 * x; }, 0);
  expectClose("neg'", all, [](float x) { return Neg{}.derivative(x, -x); },
              [](double) { return -1.0; }, 0);
  expectClose("scale'", all, [](float x) { return Scale{0.125f, 3.0f}.derivative(x, 0); },
              [](double) { return 0.125; }, 0);
  // From the forward's f32 output y: the cancellation in 1 - y^2 costs an
  // ulp of 1 in absolute terms.
  expectClose("tanh'", all, [](float x) { return Tanh{}.derivative(x, Tanh{}.value(x)); },
              [](double x) { return 1 - std::tanh(x) * std::tanh(x); }, 4, 3e-7);
  expectClose("sigmoid'", all,
              [](float x) { return Sigmoid{}.derivative(x, Sigmoid{}.value(x)); },
              [](double x) {
                double s = 1 / (1 + std::exp(-x));
                return s * (1 - s);
              },
              4, 1e-7);
  expectClose("exp'", where(all, [](float x) { return x > -87 && x < 88; }),
              [](float x) { return Exp{}.derivative(x, Exp{}.value(x)); },
              [](double x) { return std::exp(x); }, 1);
  expectClose("log'", positive, [](float x) { return Log{}.derivative(x, Log{}.value(x)); },
              [](double x) { return 1 / x; }, 0.5);
  expectClose("sqrt'", positive, [](float x) { return Sqrt{}.derivative(x, Sqrt{}.value(x)); },
              [](double x) { return 0.5 / std::sqrt(x); }, 2);
  expectClose("rsqrt'", normal, [](float x) { return Rsqrt{}.derivative(x, Rsqrt{}.value(x)); },
              [](double x) { return -0.5 * std::pow(x, -1.5); }, 8);
  for (float e : {0.5f, 2.0f, 3.0f})
    expectClose("pow'", normal, [e](float x) { return Pow{e}.derivative(x, 0); },
                [e](double x) { return e * std::pow(x, e - 1.0); }, 2);
  expectClose("erf'", all, [](float x) { return Erf{}.derivative(x, 0); },
              [](double x) { return 2 / std::sqrt(kPi) * std::exp(-x * x); }, 3, 1e-37);
  // Phi(x) + x pdf(x): near its root (x = -0.75) the two terms (about 0.24,
  // an ulp 1.5e-8) cancel, and a few ulps of them are the bound.
  expectClose("gelu'", all, [](float x) { return Gelu{}.derivative(x, 0); },
              [](double x) {
                return 0.5 * std::erfc(-x / kSqrt2) + x * std::exp(-x * x / 2) / std::sqrt(2 * kPi);
              },
              4, 1.5e-7);
  expectClose("gelu_tanh'", all, [](float x) { return GeluTanh{}.derivative(x, 0); },
              [](double x) {
                double k = std::sqrt(2 / kPi), u = k * (x + 0.044715 * x * x * x);
                double e = std::exp(-2 * u), s = 1 / (1 + e);
                return s + x * e * s * s * 2 * k * (1 + 3 * 0.044715 * x * x);
              },
              4, 3e-7);
}

TEST(Numerics, VectorExpIsWithinTwoUlpOverEveryF16InputOfItsRange) {
  std::vector<float> inRange = where(finiteF16(), [](float x) { return x > -87.3f && x < 88.3f; });
  expectClose("vectorExp", inRange, vectorExp, [](double x) { return std::exp(x); }, 2);
  EXPECT_EQ(vectorExp(0.0f), 1.0f);
  // Below the normal range: 0, so a masked score's probability is exactly 0.
  EXPECT_EQ(vectorExp(-30000.0f), 0.0f);
  EXPECT_EQ(vectorExp(-87.4f), 0.0f);
  EXPECT_GT(vectorExp(-87.3f), 0.0f);
  EXPECT_TRUE(std::isfinite(vectorExp(1000.0f)));
  EXPECT_TRUE(std::isnan(vectorExp(NAN)));
}

TEST(Numerics, VectorExpSplitKeepsTheAccuracyOfAnExactLargeArgument) {
  // exp(-x^2) from an exact -h^2 and the small rest: within 2 ulp out to the
  // normal range's end, where exp of the rounded -x^2 is off by tens. (f32
  // inputs: an f16's square is exact in f32 already.)
  int worse = 0;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> uniform(-9.3f, 9.3f);
  for (int i = 0; i < 100000; ++i) {
    float x = uniform(rng);
    float h = floatOf(bitsOf(x) & 0xFFFFF000u);
    double want = std::exp(-double(x) * x), got = vectorExpSplit(-(h * h), -((x - h) * (x + h)));
    if (want < 1.2e-38)
      continue;
    EXPECT_LE(std::fabs(got - want), 2 * ulpAt(want)) << "x = " << x;
    worse += std::fabs(vectorExp(-(x * x)) - want) > 2 * ulpAt(want);
  }
  EXPECT_GT(worse, 100); // the split is what keeps the accuracy
  // With lo = 0 it is vectorExp, bit for bit.
  for (float x : finiteF16())
    ASSERT_EQ(bitsOf(vectorExpSplit(x, 0.0f)), bitsOf(vectorExp(x))) << x;
}

TEST(Numerics, F16RoundingIsNearestEvenAgainstF64AtEveryMidpoint) {
  // Between consecutive finite f16 values a < b, the midpoint (exact in f32)
  // goes to the one with an even mantissa, and one f32 ulp either side of it
  // to the nearer one.
  for (uint32_t h = 0; h < 0x7BFF; ++h) {
    float a = f16ToF32(uint16_t(h)), b = f16ToF32(uint16_t(h + 1));
    float mid = float((double(a) + double(b)) / 2);
    ASSERT_EQ(double(mid), (double(a) + double(b)) / 2);
    uint16_t even = (h & 1) ? uint16_t(h + 1) : uint16_t(h);
    ASSERT_EQ(f32ToF16(mid), even) << a << " .. " << b;
    ASSERT_EQ(f32ToF16(std::nextafter(mid, -INFINITY)), h) << a;
    ASSERT_EQ(f32ToF16(std::nextafter(mid, INFINITY)), h + 1) << b;
    ASSERT_EQ(f32ToF16(-mid), uint16_t(even | 0x8000));
  }
  EXPECT_EQ(f32ToF16(65519.996f), 0x7BFF); // below the midpoint to 2^16
  EXPECT_EQ(f32ToF16(65520.0f), 0x7C00);   // the midpoint rounds to inf
}

TEST(Numerics, TheFiniteTestOnBitsAgreesWithIsFiniteEverywhere) {
  for (uint32_t h = 0; h < 65536; ++h) {
    ASSERT_EQ(isNonFiniteF16(uint16_t(h)), !std::isfinite(f16ToF32(uint16_t(h)))) << h;
    ASSERT_EQ(isNonFiniteBf16(uint16_t(h)), !std::isfinite(bf16ToF32(uint16_t(h)))) << h;
  }
  std::mt19937 rng(1);
  for (int i = 0; i < 1 << 20; ++i) {
    uint32_t bits = rng();
    ASSERT_EQ(isNonFiniteF32(floatOf(bits)), !std::isfinite(floatOf(bits))) << bits;
  }
  for (float v : {INFINITY, -INFINITY, NAN, std::numeric_limits<float>::max(),
                  std::numeric_limits<float>::denorm_min(), 0.0f, -0.0f})
    EXPECT_EQ(isNonFiniteF32(v), !std::isfinite(v)) << v;
}

TEST(Numerics, OptimizerUpdatesMatchTheirF64Definitions) {
  std::mt19937 rng(4);
  std::normal_distribution<double> dist(0.0, 1.0);
  for (int i = 0; i < 1000; ++i) {
    float p0 = float(dist(rng)), g = float(dist(rng)), v0 = float(dist(rng));
    float p = p0;
    SgdUpdate{0.1f}(p, g);
    EXPECT_NEAR(p, p0 - 0.1 * g, 1e-6 * (1 + std::fabs(p0)));
    float v = v0;
    p = p0;
    MomentumUpdate{0.1f, 0.9f}(p, g, v);
    EXPECT_NEAR(v, 0.9 * v0 + g, 1e-6 * (1 + std::fabs(v0) + std::fabs(g)));
    EXPECT_NEAR(p, p0 - 0.1 * (0.9 * v0 + g), 1e-6 * (1 + std::fabs(p0)));
  }
  // Ten AdamW steps against the textbook update in f64.
  double P = 0.5, M = 0, V = 0;
  float p = 0.5f, m = 0, v = 0;
  const double lr = 1e-2, b1 = 0.9, b2 = 0.999, eps = 1e-8, wd = 0.01;
  for (int t = 1; t <= 10; ++t) {
    double g = std::sin(t) * 0.3;
    AdamUpdate::at(float(lr), b1, b2, eps, wd, t)(p, float(g), m, v);
    P -= lr * wd * P;
    M = b1 * M + (1 - b1) * g;
    V = b2 * V + (1 - b2) * g * g;
    P -= lr * (M / (1 - std::pow(b1, t))) / (std::sqrt(V / (1 - std::pow(b2, t))) + eps);
    EXPECT_NEAR(p, P, 1e-6) << "step " << t;
  }
  // The first step moves every param by lr against its gradient's sign.
  float q = 1.0f, mq = 0, vq = 0;
  AdamUpdate::at(1e-3f, b1, b2, eps, 0, 0)(q, -4.0f, mq, vq); // a step below 1 counts as 1
  EXPECT_NEAR(q, 1.001, 1e-6);
}

TEST(Numerics, TheWeightAverageIsPyTorchsLerpWithTensorFlowsWarmup) {
  // The decay: fixed, or min(decay, (1 + n) / (10 + n)) after n steps.
  EXPECT_FLOAT_EQ(EmaUpdate::at(0.999, false, 5).weight, float(1 - 0.999));
  EXPECT_FLOAT_EQ(EmaUpdate::at(0.999, true, 1).weight, float(1 - 2.0 / 11.0));
  EXPECT_FLOAT_EQ(EmaUpdate::at(0.999, true, 1e6).weight, float(1 - 0.999));
  EXPECT_FLOAT_EQ(EmaUpdate::at(0.5, true, 100).weight, 0.5f); // 101/110 is above 0.5
  // Each side of the lerp, bit for bit as torch.lerp computes it in f32.
  std::mt19937 rng(5);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (float w : {0.001f, 0.3f, 0.5f, 0.9f}) {
    for (int i = 0; i < 1000; ++i) {
      volatile float a = dist(rng), b = dist(rng); // no contraction into an FMA
      float diff = b - a, product = w < 0.5f ? w * diff : diff * (1.0f - w);
      float want = w < 0.5f ? a + product : b - product;
      float got = a;
      EmaUpdate{w}(got, b);
      ASSERT_EQ(got, want) << "weight " << w;
      ASSERT_NEAR(got, a + double(w) * (double(b) - a), 1e-6);
    }
  }
  // The ends are exact: weight 1 gives the value itself.
  float end = 0.25f;
  EmaUpdate{1.0f}(end, 3.0f);
  EXPECT_EQ(end, 3.0f);
}

TEST(Numerics, TheLossScaleRuleGrowsBacksOffAndKeepsItsFloor) {
  LossScaleRule rule{/*incrEveryNSteps=*/2, /*decrEveryNNanOrInf=*/2, 2.0, 0.5, true};
  LossScaleState s{1024, 0, 0};
  updateLossScale(false, s, rule);
  EXPECT_EQ(s.scale, 1024.0f);
  EXPECT_EQ(s.good, 1.0f);
  updateLossScale(false, s, rule);
  EXPECT_EQ(s.scale, 2048.0f) << "grows after incrEveryNSteps finite steps";
  EXPECT_EQ(s.good, 0.0f);
  updateLossScale(true, s, rule);
  EXPECT_EQ(s.scale, 2048.0f) << "one bad step of two";
  EXPECT_EQ(s.bad, 1.0f);
  updateLossScale(false, s, rule);
  EXPECT_EQ(s.bad, 0.0f) << "a finite step resets the bad count";
  updateLossScale(true, s, rule);
  updateLossScale(true, s, rule);
  EXPECT_EQ(s.scale, 1024.0f) << "backs off after decrEveryNNanOrInf bad steps";
  LossScaleState low{1.5f, 0, 0};
  updateLossScale(true, low, {2000, 1, 2.0, 0.5, true});
  EXPECT_EQ(low.scale, 1.0f) << "never below 1";
  LossScaleState top{std::ldexp(1.0f, 127), 0, 0};
  updateLossScale(false, top, {1, 1, 2.0, 0.5, true});
  EXPECT_EQ(top.scale, std::ldexp(1.0f, 127)) << "no growth to inf";
  LossScaleState fixed{1024, 0, 0};
  updateLossScale(true, fixed, {1, 1, 2.0, 0.5, false});
  updateLossScale(false, fixed, {1, 1, 2.0, 0.5, false});
  EXPECT_EQ(fixed.scale, 1024.0f) << "a static rule keeps the scale";
}

// PyTorch's cross_entropy(label_smoothing=e, ignore_index=-100): a row's
// loss is (1 - e) (lse - x_y) + e (lse - mean x), and its gradient the
// softmax less the smoothed target, which sums to 0 over the row.
TEST(Numerics, CrossEntropyRowsAreSmoothedAsPyTorchsAndLabelsClassified) {
  CrossEntropyRule rule{0.1, 4, true, -100};
  EXPECT_EQ(rule.rowLabel(2), 2);
  EXPECT_EQ(rule.rowLabel(-100), kIgnoredRow);
  EXPECT_EQ(rule.rowLabel(4), kBadLabel);
  EXPECT_EQ(rule.rowLabel(-1), kBadLabel);
  CrossEntropyRule strict{0.0, 4, false, 0};
  EXPECT_EQ(strict.rowLabel(0), 0) << "0 is a class unless it is ignored";
  EXPECT_EQ(strict.rowLabel(-100), kBadLabel);
  double x[4] = {0.5, -1.25, 2.0, 0.25}, lse = 0, sum = 0;
  for (double v : x)
    lse += std::exp(v), sum += v;
  lse = std::log(lse);
  EXPECT_NEAR(rule.rowLoss(lse, (float)x[2], sum), 0.9 * (lse - x[2]) + 0.1 * (lse - sum / 4),
              1e-12);
  EXPECT_EQ(strict.rowLoss(lse, (float)x[2], 123.0), lse - x[2]) << "no smoothing: lse - x_y";
  double exps = std::exp(lse), total = 0;
  for (int k = 0; k < 4; ++k) {
    float g = rule.smoothedGradient((float)std::exp(x[k]), 1.0 / exps, k == 2, 1.0);
    double want = std::exp(x[k] - lse) - (0.025 + (k == 2 ? 0.9 : 0.0));
    EXPECT_NEAR(g, want, 1e-7) << k;
    total += g;
  }
  EXPECT_NEAR(total, 0.0, 1e-6);
}

// PyTorch's cross_entropy(weight=w, label_smoothing=e): a row's numerator
// is w_y (1 - e) (lse - x_y) + e / C sum_c w_c (lse - x_c); its gradient
// softmax ((1 - e) w_y + e W / C) - ((1 - e) w_y [on y] + e w_k / C), which
// also sums to 0 over the row. Weights of 1 give the unweighted rule's.
TEST(Numerics, CrossEntropyRowsAreWeighedAsPyTorchs) {
  CrossEntropyRule rule{0.2, 4, false, 0}, plain{0.0, 4, false, 0};
  double x[4] = {0.5, -1.25, 2.0, 0.25}, w[4] = {1.0, 3.0, 0.5, 2.0}, lse = 0, W = 0, wx = 0;
  for (int k = 0; k < 4; ++k)
    lse += std::exp(x[k]), W += w[k], wx += w[k] * x[k];
  lse = std::log(lse);
  double smoothed = 0;
  for (int k = 0; k < 4; ++k)
    smoothed += w[k] * (lse - x[k]);
  EXPECT_NEAR(rule.weightedRowLoss(lse, (float)x[1], wx, w[1], W),
              0.8 * w[1] * (lse - x[1]) + 0.2 / 4 * smoothed, 1e-12);
  EXPECT_NEAR(plain.weightedRowLoss(lse, (float)x[1], 123.0, w[1], W), w[1] * (lse - x[1]), 1e-12)
      << "no smoothing: w_y (lse - x_y)";
  double exps = std::exp(lse), total = 0;
  for (int k = 0; k < 4; ++k) {
    float g = rule.weightedGradient((float)std::exp(x[k]), 1.0 / exps, k == 1, w[k], w[1], W, 0.5);
    double p = std::exp(x[k] - lse);
    double want = (p * (0.8 * w[1] + 0.2 * W / 4) - ((k == 1 ? 0.8 * w[1] : 0.0) + 0.2 * w[k] / 4)) * 0.5;
    EXPECT_NEAR(g, want, 1e-7) << k;
    total += g;
    float ones = rule.weightedGradient((float)std::exp(x[k]), 1.0 / exps, k == 1, 1, 1, 4, 0.5);
    EXPECT_NEAR(ones, rule.smoothedGradient((float)std::exp(x[k]), 1.0 / exps, k == 1, 0.5), 1e-7);
  }
  EXPECT_NEAR(total, 0.0, 1e-6);
}

TEST(Numerics, DropoutBitsAreUniformKeyedAndReproducible) {
  uint64_t stream = dropoutStream(3, 7, 0);
  EXPECT_NE(stream, dropoutStream(3, 7, 1)) << "each run draws anew";
  EXPECT_NE(stream, dropoutStream(3, 8, 0)) << "each op draws its own";
  EXPECT_NE(stream, dropoutStream(4, 7, 0)) << "each run seed draws its own";
  double sum = 0;
  int dropped = 0;
  const int n = 200000;
  for (int i = 0; i < n; ++i) {
    double u = uniformAt(stream, i);
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    float y = dropoutAt(2.0f, stream, i, 0.25, float(1 / 0.75));
    ASSERT_TRUE(y == 0.0f || y == 2.0f * float(1 / 0.75));
    dropped += y == 0.0f;
    ASSERT_EQ(y, dropoutAt(2.0f, stream, i, 0.25, float(1 / 0.75))) << "the same bits again";
  }
  EXPECT_NEAR(sum / n, 0.5, 0.005);
  EXPECT_NEAR(double(dropped) / n, 0.25, 0.005);
}

} // namespace

TEST(Numerics, AChainEvaluatedFourAtOnceGivesEachElementsOwnBits) {
  // Every function as a value and as a derivative, every binary op, each
  // rounded to f16 or bf16 or not: one chain over two operands.
  Chain c{};
  c.inputs = 2;
  auto add = [&](ChainKind kind, int fn, ChainRound round, int8_t a, int8_t b, int8_t d) {
    ChainOp &o = c.op[c.ops++];
    o = {kind, uint8_t(fn), round, {a, b, d}, 0.5f, 0.25f};
    return int8_t(c.inputs + c.ops - 1);
  };
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> value(-3.0f, 3.0f);
  int functions = int(UnaryFn::Cos) + 1, binaries = int(BinaryFn::Minimum) + 1;
  for (int fn = 0; fn < functions + binaries; ++fn)
    for (ChainRound round : {ChainRound::None, ChainRound::F16, ChainRound::BF16}) {
      SCOPED_TRACE(std::to_string(fn) + " " + std::to_string(int(round)));
      c.ops = 0;
      if (fn < functions) {
        int8_t y = add(ChainKind::Value, fn, round, 0, -1, -1);
        c.result[0] = add(ChainKind::Derivative, fn, round, 0, y, 1);
        c.result[1] = y;
      } else {
        c.result[0] = add(ChainKind::Binary, fn - functions, round, 0, 1, -1);
        c.result[1] = add(ChainKind::Binary, fn - functions, round, c.result[0], 0, -1);
      }
      c.outputs = 2;
      for (int trial = 0; trial < 64; ++trial) {
        float four[kChainInputs + kChainOps][4] = {};
        float one[4][kChainInputs + kChainOps] = {};
        for (int w = 0; w < 4; ++w)
          for (int k = 0; k < c.inputs; ++k)
            four[k][w] = one[w][k] = trial == 0 && w == 3 ? NAN : value(gen);
        evalChainLanes<4>(c, four);
        for (int w = 0; w < 4; ++w) {
          evalChain(c, one[w]);
          for (int k = 0; k < c.outputs; ++k) {
            float got = four[c.result[k]][w], want = one[w][c.result[k]];
            if (std::isnan(want)) // the host's vector code may give NaN another sign
              ASSERT_TRUE(std::isnan(got)) << w << " " << k;
            else
              ASSERT_EQ(bitsOf(got), bitsOf(want)) << w << " " << k;
          }
        }
      }
    }
}
