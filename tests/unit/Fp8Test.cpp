// FP8 conversions (runtime/numerics/Fp8.h) against the formats' definitions:
// every code's value, every midpoint between neighbouring codes rounding to
// the even one, saturation, underflow, signed zero and NaN. The CLI test
// (tests/lit/cli/fp8.test) runs 2^20 f32 inputs through a graph's casts.
#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "compiler/GraphBuilder.h"
#include "ops/GraphNames.h"
#include "runtime/core/Convert.h"
#include "runtime/core/MemoryPlanner.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "runtime/numerics/Fp8.h"

using namespace ampc;

namespace {

struct Format {
  const char *name;
  num::Fp8Format f;
  int exponentBits, mantissaBits, bias;
  double largest;
};

const Format kFormats[] = {{"e4m3", num::kE4M3, 4, 3, 7, 448.0},
                           {"e5m2", num::kE5M2, 5, 2, 15, 57344.0}};

/// Code c's value as the format defines it; NaN for its NaN codes.
double defined(const Format &fmt, int c) {
  int e = (c >> fmt.mantissaBits) & ((1 << fmt.exponentBits) - 1);
  int m = c & ((1 << fmt.mantissaBits) - 1);
  double sign = (c & 0x80) ? -1.0 : 1.0;
  int top = (1 << fmt.exponentBits) - 1;
  if (fmt.exponentBits == 5 && e == top)
    return m == 0 ? sign * INFINITY : NAN;
  if (fmt.exponentBits == 4 && e == top && m == 7)
    return NAN;
  if (e == 0)
    return sign * std::ldexp(m, 1 - fmt.bias - fmt.mantissaBits);
  return sign * std::ldexp((1 << fmt.mantissaBits) + m, e - fmt.bias - fmt.mantissaBits);
}

TEST(Fp8, EveryCodeWidensToItsDefinedValue) {
  for (const Format &fmt : kFormats)
    for (int c = 0; c < 256; ++c) {
      double want = defined(fmt, c);
      float got = num::fromFp8((uint8_t)c, fmt.f);
      if (std::isnan(want))
        EXPECT_TRUE(std::isnan(got)) << fmt.name << " code " << c;
      else
        EXPECT_EQ((double)got, want) << fmt.name << " code " << c;
    }
  EXPECT_EQ(num::fromFp8(num::kE4M3.maxCode, num::kE4M3), 448.0f);
  EXPECT_EQ(num::fromFp8(num::kE5M2.maxCode, num::kE5M2), 57344.0f);
}

TEST(Fp8, MidpointsRoundToTheEvenCodeAndNeighboursToTheNearest) {
  for (const Format &fmt : kFormats)
    for (int c = 0; c < fmt.f.maxCode; ++c) {
      double lo = defined(fmt, c), hi = defined(fmt, c + 1), mid = (lo + hi) / 2;
      int even = c % 2 == 0 ? c : c + 1;
      for (double sign : {1.0, -1.0}) {
        uint8_t s = sign < 0 ? 0x80 : 0;
        EXPECT_EQ(num::toFp8(sign * mid, fmt.f), s | even) << fmt.name << " between " << c;
        EXPECT_EQ(num::toFp8(sign * std::nextafter(mid, 0.0), fmt.f), s | c) << fmt.name;
        EXPECT_EQ(num::toFp8(sign * std::nextafter(mid, 1e9), fmt.f), s | (c + 1)) << fmt.name;
        EXPECT_EQ(num::toFp8(sign * lo, fmt.f), s | c) << fmt.name << " exact " << c;
      }
    }
}

TEST(Fp8, BeyondTheLargestSaturatesAndNaNIsCanonical) {
  for (const Format &fmt : kFormats) {
    uint8_t top = fmt.f.maxCode;
    for (double v : {fmt.largest, fmt.largest * 1.01, fmt.largest * 2, 1e30, (double)INFINITY}) {
      EXPECT_EQ(num::toFp8(v, fmt.f), top) << fmt.name << " " << v;
      EXPECT_EQ(num::toFp8(-v, fmt.f), 0x80 | top) << fmt.name << " " << -v;
    }
    EXPECT_EQ(num::toFp8(NAN, fmt.f), 0x7F) << fmt.name;
    EXPECT_EQ(num::toFp8(-NAN, fmt.f), 0x7F) << fmt.name;
    EXPECT_TRUE(std::isnan(num::fromFp8(num::toFp8(NAN, fmt.f), fmt.f)));
  }
}

TEST(Fp8, UnderflowKeepsTheSign) {
  for (const Format &fmt : kFormats) {
    double smallest = defined(fmt, 1);
    EXPECT_EQ(num::toFp8(smallest / 2, fmt.f), 0x00) << "a tie rounds to the even zero";
    EXPECT_EQ(num::toFp8(std::nextafter(smallest / 2, 1.0), fmt.f), 0x01);
    EXPECT_EQ(num::toFp8(-smallest / 4, fmt.f), 0x80);
    EXPECT_EQ(num::toFp8(-0.0, fmt.f), 0x80);
    EXPECT_EQ(num::toFp8(1e-300, fmt.f), 0x00);
  }
}

TEST(Fp8, TheRuntimesConversionsRoundOnceFromTheExactValue) {
  // 17 + 2^-30 is just above the midpoint 17 between E4M3's 16 and 18: a
  // double rounded to f32 first (17 exactly) would go to the even 16.
  uint8_t code = 0;
  rt::storeElement(&code, rt::DType::F8E4M3, 0, 17.0 + std::ldexp(1.0, -30));
  EXPECT_EQ(rt::loadElement(&code, rt::DType::F8E4M3, 0), 18.0);
  float in[3] = {18.0f, -500.0f, 0.3f}, back[3];
  uint8_t codes[3];
  rt::fromF32(in, codes, rt::DType::F8E5M2, 3);
  rt::toF32(codes, rt::DType::F8E5M2, back, 3);
  EXPECT_EQ(back[0], 16.0f) << "a tie between 16 and 20 goes to the even 16";
  EXPECT_EQ(back[1], -512.0f);
  EXPECT_EQ(back[2], 0.3125f);
}

} // namespace

namespace {

/// A plan of one fp8_scale_update step over an amax input and the state of
/// one scaled tensor (a history of `n`, scale 1, scale_inv 1).
struct ScalingPlan {
  rt::Plan plan;
  std::unique_ptr<rt::Executor> ex;

  ScalingPlan(int64_t n, rt::Json attrs) {
    auto buffer = [&](const char *name, rt::BufferKind kind, std::vector<int64_t> shape,
                      double init) {
      return test::addBuffer(plan, name, kind, rt::DType::F32, shape, init);
    };
    int amax = buffer("amax", rt::BufferKind::Input, {}, 0);
    int history = buffer("history", rt::BufferKind::Param, {n}, 0);
    int scale = buffer("scale", rt::BufferKind::Param, {}, 1);
    int inv = buffer("scale_inv", rt::BufferKind::Param, {}, 1);
    plan.inputs = {amax};
    plan.steps.push_back(
        {"update", rt::Kernel::Fp8ScaleUpdate, {history, scale, inv, amax}, {}, attrs});
    rt::planMemory(plan);
    ex = std::make_unique<rt::Executor>(plan);
  }
  void step(float amax) {
    ex->writeScalar(ex->id("amax"), amax);
    ex->run();
  }
  float get(const char *name) { return ex->readF32(ex->id(name))[0]; }
};

/// Transformer Engine's DelayedScaling, as its PyTorch code computes it:
/// the forward writes amax_history[0]; then amax is the history's max
/// (torch.max: NaN if one is NaN) or [0], the history rolls by -1 and [0]
/// is zeroed, and sf = (fp8_max / amax) / 2^margin in f32, kept where amax
/// is not > 0 or not finite.
struct TransformerEngine {
  std::vector<float> history;
  float scale = 1.0f, fp8Max;
  int margin;
  bool mostRecent;

  void step(float amax) {
    history[0] = amax;
    float a = history[0];
    if (!mostRecent)
      for (float h : history)
        a = std::isnan(a) || std::isnan(h) ? NAN : std::max(a, h);
    std::rotate(history.begin(), history.begin() + 1, history.end());
    history[0] = 0.0f;
    float sf = (fp8Max / a) / std::ldexp(1.0f, margin);
    sf = a > 0.0f ? sf : scale;
    scale = std::isfinite(a) ? sf : scale;
  }
};

TEST(Fp8Scaling, ThirtyStepsFollowTransformerEnginesDelayedScaling) {
  struct Case {
    int64_t history;
    float fp8Max;
    int margin;
    bool mostRecent;
  };
  for (Case k : {Case{4, 448.0f, 0, false}, Case{4, 57344.0f, 1, false},
                 Case{1, 448.0f, 2, false}, Case{8, 448.0f, 0, true}}) {
    ScalingPlan p(k.history, {{"fp8_max", k.fp8Max},
                              {"margin", k.margin},
                              {"amax_compute", k.mostRecent ? "most_recent" : "max"}});
    TransformerEngine te{std::vector<float>(k.history, 0.0f), 1.0f, k.fp8Max, k.margin,
                         k.mostRecent};
    for (int t = 0; t < 30; ++t) {
      // A changing amax: growing, falling back, and a zero, an inf and a NaN.
      float amax = t == 7 ? 0.0f : t == 13 ? INFINITY : t == 19 ? NAN
                                                  : 0.37f * std::pow(1.6f, float(t % 11));
      p.step(amax);
      te.step(amax);
      ASSERT_EQ(p.get("scale"), te.scale)
          << "history " << k.history << " margin " << k.margin << ", step " << t;
      ASSERT_EQ(p.get("scale_inv"), 1.0f / te.scale);
    }
  }
}

TEST(Fp8Scaling, AScaleThatWouldOverflowIsKept) {
  ScalingPlan p(2, {{"fp8_max", 448.0}});
  p.step(2.0f);
  EXPECT_EQ(p.get("scale"), 224.0f);
  p.step(1e-39f); // 448 / 1e-39 is beyond f32, but the history's max is 2
  EXPECT_EQ(p.get("scale"), 224.0f);
  p.step(1e-39f); // now the max is 1e-39: the scale would be inf
  EXPECT_EQ(p.get("scale"), 224.0f);
}

} // namespace

namespace {

mlir::NamedAttrList toAttr(GraphBuilder &b, const char *dtype,
                           std::vector<std::pair<const char *, bool>> flags = {}) {
  mlir::NamedAttrList attrs;
  mlir::Builder mb(&b.context());
  attrs.set("to", mlir::TypeAttr::get(graph::parseDtype(&b.context(), dtype)));
  for (auto [name, on] : flags)
    attrs.set(name, mb.getBoolAttr(on));
  return attrs;
}

TEST(Fp8Gemm, QuantizeRoundsTheScaledValueAndTakesTheAmaxInOnePass) {
  test::Compiled c = test::compile([](GraphBuilder &b) {
    Tensor x = b.input("x", {6});
    Tensor s = b.input("s", {});
    mlir::NamedAttrList attrs = toAttr(b, "f8e4m3");
    mlir::Builder mb(&b.context());
    attrs.set("outs", mb.getStrArrayAttr({"q", "q.amax"}));
    Tensor q = b.node("fp8_quantize", {x, s}, attrs, "q");
    b.output(q);
    b.output(Tensor(q.value().getDefiningOp()->getResult(1)));
  });
  std::vector<double> x = {0.3, -1.7, 20.0, NAN, -INFINITY, 1e-4};
  c.set("x", x);
  c.set("s", {30.0});
  c.ex->run();
  std::vector<std::byte> codes = c.ex->readBytes(c.ex->id("q"));
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ((uint8_t)codes[i], num::toFp8(double(float(x[i]) * 30.0f), num::kE4M3)) << i;
  EXPECT_EQ((uint8_t)codes[4], 0xFE) << "-inf saturates to -448";
  EXPECT_EQ(c.get("q.amax")[0], INFINITY)
      << "the amax keeps inf and ignores NaN";
}

TEST(Fp8Gemm, TheProductIsTheDecodedGemmTimesTheScaleInversesRoundedOnce) {
  // a [2, 3, 4] (E4M3) times b [5, 4]^T (E5M2), batched over a's first axis.
  std::vector<uint8_t> codesA(24), codesB(20);
  for (int i = 0; i < 24; ++i)
    codesA[i] = uint8_t((i * 37 + 5) % 0x7E | (i % 3 ? 0 : 0x80));
  for (int i = 0; i < 20; ++i)
    codesB[i] = uint8_t((i * 53 + 9) % 0x7B | (i % 4 ? 0x80 : 0));
  test::Compiled c = test::compile([](GraphBuilder &b) {
    Tensor a = b.input("a", {2, 3, 4}, "f8e4m3"), bm = b.input("b", {5, 4}, "f8e5m2");
    Tensor ia = b.input("ia", {}), ib = b.input("ib", {});
    b.output(b.node("fp8_matmul", {a, bm, ia, ib},
                    toAttr(b, "bf16", {{"transpose_b", true}}), "y"));
  });
  c.ex->write(c.ex->id("a"), codesA.data(), codesA.size());
  c.ex->write(c.ex->id("b"), codesB.data(), codesB.size());
  c.set("ia", {0.125});
  c.set("ib", {1.0 / 3.0});
  c.ex->run();
  std::vector<double> y = c.get("y");
  float alpha = 0.125f * float(1.0 / 3.0);
  for (int bi = 0; bi < 2; ++bi)
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 5; ++j) {
        float acc = 0.0f; // exact: four products of FP8 values, few bits each
        for (int p = 0; p < 4; ++p)
          acc += num::e4m3ToF32(codesA[(bi * 3 + i) * 4 + p]) * num::e5m2ToF32(codesB[j * 4 + p]);
        float want = rt::bf16ToF32(rt::f32ToBf16(acc * alpha));
        EXPECT_EQ(y[(bi * 3 + i) * 5 + j], want) << bi << "," << i << "," << j;
      }
}

} // namespace
