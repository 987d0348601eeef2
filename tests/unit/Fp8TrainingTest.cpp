// The FP8 backward (docs/amp-policy.md, "FP8"): at --dtype fp8 a layer's
// gradients are FP8 GEMMs of the result's gradient quantized with its own
// scale (E5M2) and the forward's saved E4M3 operands, each scaled back by
// the two scale inverses and rounded once to bf16. Held here to that
// formula computed from the operands' codes.
#include <cmath>

#include <gtest/gtest.h>

#include "compiler/GraphBuilder.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "runtime/core/Convert.h"
#include "runtime/numerics/Fp8.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

constexpr int kRows = 32, kIn = 32, kOut = 16; // x [2, 16, 32] · w [32, 16]

std::vector<float> decoded(const std::vector<double> &v, float scale, num::Fp8Format format) {
  std::vector<float> out;
  for (double x : v) {
    uint8_t code = num::toFp8(double(float(x) * scale), format);
    out.push_back(format.mantissaBits == 3 ? num::e4m3ToF32(code) : num::e5m2ToF32(code));
  }
  return out;
}

float bf16(double v) { return rt::bf16ToF32(rt::f32ToBf16(float(v))); }

TEST(Fp8Backward, GradientsAreFp8GemmsOfTheScaledGradientAndTheSavedOperands) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "fp8");
  Tensor x = b.param("x", {2, 16, kIn}, Init::normal(1.0));
  Tensor w = b.param("w", {kIn, kOut}, Init::normal(0.5));
  Tensor t = b.input("t", {2, 16, kOut});
  // loss = sum(y * t): y's gradient is t, rounded to bf16.
  b.setLoss(b.reduceSum(b.mul(b.matmul(x, w, false, false, "fc"), t, "yt"), {}, false, "loss"));
  auto module = b.finish();
  AmpSettings amp;
  amp.dtype = "fp8";
  runAmpPipeline(*module, amp);
  test::differentiateWithGradOutputs(*module);
  rt::Plan plan = lowerToPlan(*module);
  rt::Executor ex(plan, {/*training=*/true, /*seed=*/3});

  std::vector<double> xs = test::randomValues(kRows * kIn, "f32", 1);
  std::vector<double> ws = test::randomValues(kIn * kOut, "f32", 2);
  std::vector<double> ts = test::randomValues(kRows * kOut, "bf16", 3);
  test::setValues(ex, "x", xs);
  test::setValues(ex, "w", ws);
  test::setValues(ex, "t", ts);
  // Scales as delayed scaling leaves them: the gradient's no power of two.
  const float sa = 64.0f, sb = 128.0f, sg = 3000.0f;
  test::setValues(ex, "fc.fp8_a.scale", {sa});
  test::setValues(ex, "fc.fp8_a.scale_inv", {1.0f / sa});
  test::setValues(ex, "fc.fp8_b.scale", {sb});
  test::setValues(ex, "fc.fp8_b.scale_inv", {1.0f / sb});
  test::setValues(ex, "fc.fp8_grad.scale", {sg});
  test::setValues(ex, "fc.fp8_grad.scale_inv", {1.0f / sg});
  ex.run();

  std::vector<float> qa = decoded(xs, sa, num::kE4M3), qb = decoded(ws, sb, num::kE4M3);
  std::vector<float> qg = decoded(ts, sg, num::kE5M2);
  float alphaW = (1.0f / sa) * (1.0f / sg), alphaX = (1.0f / sg) * (1.0f / sb);
  std::vector<float> gw = test::valuesOf(ex, "w.grad"), gx = test::valuesOf(ex, "x.grad");
  ASSERT_EQ(gw.size(), size_t(kIn * kOut));
  ASSERT_EQ(gx.size(), size_t(kRows * kIn));
  // The f32 sums may round in another order than these: within one bf16 step.
  for (int k = 0; k < kIn; ++k)
    for (int n = 0; n < kOut; ++n) {
      double sum = 0;
      for (int r = 0; r < kRows; ++r)
        sum += double(qa[r * kIn + k]) * qg[r * kOut + n];
      float want = bf16(sum * alphaW);
      EXPECT_NEAR(gw[k * kOut + n], want, std::fabs(want) / 128 + 1e-7) << "dw " << k << "," << n;
    }
  for (int r = 0; r < kRows; ++r)
    for (int k = 0; k < kIn; ++k) {
      double sum = 0;
      for (int n = 0; n < kOut; ++n)
        sum += double(qg[r * kOut + n]) * qb[k * kOut + n];
      float want = bf16(sum * alphaX);
      EXPECT_NEAR(gx[r * kIn + k], want, std::fabs(want) / 128 + 1e-7) << "dx " << r << "," << k;
    }
  // And far from a gradient that skipped the FP8 rounding of t (E5M2 keeps 3
  // significant bits): the test sees which operands were quantized.
  double far = 0;
  for (int k = 0; k < kIn; ++k)
    for (int n = 0; n < kOut; ++n) {
      double exact = 0;
      for (int r = 0; r < kRows; ++r)
        exact += double(qa[r * kIn + k]) / sa * ts[r * kOut + n];
      far = std::max(far, std::fabs(exact - gw[k * kOut + n]));
    }
  EXPECT_GT(far, 1e-3);
}

} // namespace
