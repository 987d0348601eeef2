// Tensor constants to and from doubles (compiler/DenseData.h): each dtype
// rounded once, to nearest even, integers saturated, splats read whole; and
// the JSON writer's shortest decimals for single-precision data.
#include <cmath>

#include "compiler/DenseData.h"
#include "compiler/GraphJson.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/JsonText.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;
using namespace mlir;

namespace {

std::vector<double> roundTrip(MLIRContext &ctx, Type element, std::vector<double> data) {
  auto type = RankedTensorType::get({(int64_t)data.size()}, element);
  return denseToDoubles(denseFromDoubles(type, data));
}

TEST(DenseData, F32RoundsToNearestEvenAndReadsBackExactly) {
  MLIRContext ctx;
  double tie = 1.0 + std::ldexp(1.0, -24); // halfway between 1 and the next f32: even is 1
  double above = tie + std::ldexp(1.0, -40);
  std::vector<double> got =
      roundTrip(ctx, Float32Type::get(&ctx), {0.1, tie, above, 1e39, -0.0, NAN, 1e-45});
  EXPECT_EQ(got[0], (double)0.1f); // the f32's exact value, not 0.1
  EXPECT_EQ(got[1], 1.0);
  EXPECT_EQ(got[2], 1.0 + std::ldexp(1.0, -23));
  EXPECT_TRUE(std::isinf(got[3]) && got[3] > 0); // beyond f32's range: inf
  EXPECT_TRUE(std::signbit(got[4]));
  EXPECT_TRUE(std::isnan(got[5]));
  EXPECT_EQ(got[6], std::ldexp(1.0, -149)); // the smallest subnormal
}

TEST(DenseData, NarrowFloatsRoundOnceFromTheDouble) {
  MLIRContext ctx;
  // 1 + 2^-11 + 2^-40: through f32 it would be the tie 1 + 2^-11 and round to
  // 1; rounded once it goes up to f16's 1 + 2^-10.
  double x = 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40);
  EXPECT_EQ(roundTrip(ctx, Float16Type::get(&ctx), {x})[0], 1.0 + std::ldexp(1.0, -10));
  EXPECT_EQ(roundTrip(ctx, Float16Type::get(&ctx), {70000.0})[0], INFINITY);
  EXPECT_EQ(roundTrip(ctx, BFloat16Type::get(&ctx), {1.0 + std::ldexp(1.0, -8)})[0], 1.0);
  EXPECT_EQ(roundTrip(ctx, Float8E4M3FNType::get(&ctx), {-0.3})[0], -0.3125);
}

TEST(DenseData, IntegersSaturateAndKeepTheirSign) {
  MLIRContext ctx;
  std::vector<double> i32 = roundTrip(ctx, IntegerType::get(&ctx, 32), {-7, 3e9, -3e9, NAN});
  EXPECT_EQ(i32, (std::vector<double>{-7, 2147483647.0, -2147483648.0, 0}));
  std::vector<double> i64 = roundTrip(ctx, IntegerType::get(&ctx, 64), {-1, 1e300});
  EXPECT_EQ(i64[0], -1);
  EXPECT_EQ(i64[1], (double)INT64_MAX);
  EXPECT_EQ(roundTrip(ctx, IntegerType::get(&ctx, 1), {0, 2, -1, NAN}),
            (std::vector<double>{0, 1, 1, 0}));
}

TEST(DenseData, SplatsReadAsEveryElement) {
  MLIRContext ctx;
  EXPECT_EQ(roundTrip(ctx, Float32Type::get(&ctx), {0.5, 0.5, 0.5}),
            (std::vector<double>{0.5, 0.5, 0.5}));
  EXPECT_EQ(roundTrip(ctx, IntegerType::get(&ctx, 64), {4, 4}), (std::vector<double>{4, 4}));
}

TEST(DenseData, JsonWritesSinglePrecisionAsItsShortestDecimal) {
  MLIRContext ctx;
  auto type = RankedTensorType::get({3}, Float32Type::get(&ctx));
  DenseElementsAttr f32 = denseFromDoubles(type, {1e-5, 0.1, INFINITY});
  EXPECT_EQ(rt::dumpJson(denseToJson(f32)), "[1e-05,0.1,\"inf\"]");
  auto f64 = RankedTensorType::get({1}, Float64Type::get(&ctx));
  EXPECT_EQ(rt::dumpJson(denseToJson(denseFromDoubles(f64, {(double)0.1f}))),
            "[0.10000000149011612]"); // f64 data keeps every digit
}

} // namespace
