// f16/bf16 storage and rounding: round to nearest even, overflow to inf,
// subnormals kept, NaN propagated; the F16C bulk path equals the exact one.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "runtime/core/Convert.h"

using namespace ampc::rt;

namespace {

float roundTripF16(float v) { return f16ToF32(f32ToF16(v)); }
float roundTripBf16(float v) { return bf16ToF32(f32ToBf16(v)); }

TEST(Half, LargestF16StaysAndOverflowGoesToInf) {
  EXPECT_EQ(roundTripF16(65504.0f), 65504.0f);
  EXPECT_EQ(roundTripF16(65519.0f), 65504.0f);
  EXPECT_TRUE(std::isinf(roundTripF16(65520.0f)));
  EXPECT_TRUE(std::isinf(roundTripF16(1e9f)));
  EXPECT_EQ(roundTripF16(-65520.0f), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(f32ToF16(std::numeric_limits<float>::infinity()), 0x7C00);
}

TEST(Half, SubnormalsAreKept) {
  float tiny = std::ldexp(1.0f, -24); // the smallest f16 subnormal
  EXPECT_EQ(f32ToF16(tiny), 0x0001);
  EXPECT_EQ(roundTripF16(tiny), tiny);
  EXPECT_EQ(roundTripF16(3 * tiny), 3 * tiny);
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -14)), 0x0400); // smallest normal
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -15)), 0x0200); // a subnormal
  EXPECT_EQ(f32ToF16(std::ldexp(1.0f, -25)), 0x0000); // tie to even: 0
  EXPECT_EQ(f32ToF16(std::ldexp(1.5f, -25)), 0x0001); // above the tie
  EXPECT_EQ(f32ToF16(std::ldexp(3.0f, -25)), 0x0002); // 1.5 ulp: tie to even 2
  EXPECT_EQ(f32ToF16(-std::ldexp(1.0f, -26)), 0x8000); // -0
}

TEST(Half, TiesGoToEven) {
  // 2049 lies halfway between 2048 and 2050 (f16 spacing 2 there).
  EXPECT_EQ(roundTripF16(2049.0f), 2048.0f);
  EXPECT_EQ(roundTripF16(2051.0f), 2052.0f);
  EXPECT_EQ(roundTripF16(1.0f + std::ldexp(1.0f, -11)), 1.0f);
  EXPECT_EQ(roundTripF16(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
  EXPECT_EQ(roundTripF16(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -10));
}

TEST(Half, NanPropagates) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(roundTripF16(nan)));
  EXPECT_TRUE(std::isnan(roundTripBf16(nan)));
  uint32_t signalling = 0x7F800001u;
  float snan;
  std::memcpy(&snan, &signalling, 4);
  EXPECT_TRUE(std::isnan(roundTripF16(snan)));
  EXPECT_TRUE(std::isnan(roundTripBf16(snan)));
}

TEST(Half, Bf16RoundsToNearestEven) {
  EXPECT_EQ(roundTripBf16(1.0f), 1.0f);
  // bf16 has 8 significant bits: spacing 2^-7 above 1.
  EXPECT_EQ(roundTripBf16(1.0f + std::ldexp(1.0f, -8)), 1.0f);            // tie, even
  EXPECT_EQ(roundTripBf16(1.0f + 3 * std::ldexp(1.0f, -8)), 1.0f + std::ldexp(1.0f, -6));
  EXPECT_EQ(roundTripBf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)),
            1.0f + std::ldexp(1.0f, -7));
  float big = roundTripBf16(3.0e38f);
  EXPECT_TRUE(std::isfinite(big));
  EXPECT_NEAR(big / 3.0e38f, 1.0, 1.0 / 256);
  EXPECT_TRUE(std::isinf(roundTripBf16(3.4e38f))); // rounds past the largest bf16
  EXPECT_EQ(roundTripBf16(std::ldexp(1.0f, -130)), std::ldexp(1.0f, -130)); // subnormal
}

TEST(Half, EveryF16WidensAndNarrowsExactly) {
  std::vector<uint16_t> all(65536);
  for (int i = 0; i < 65536; ++i)
    all[i] = i;
  std::vector<float> wide(65536);
  toF32(all.data(), DType::F16, wide.data(), wide.size()); // bulk (F16C) path
  std::vector<uint16_t> back(65536);
  fromF32(wide.data(), back.data(), DType::F16, wide.size());
  for (int i = 0; i < 65536; ++i) {
    float exact = f16ToF32(i);
    if (std::isnan(exact)) {
      EXPECT_TRUE(std::isnan(wide[i]));
      continue;
    }
    ASSERT_EQ(wide[i], exact) << i;
    ASSERT_EQ(back[i], i) << i;
  }
}

TEST(Half, BulkRoundingMatchesTheExactPath) {
  std::mt19937 rng(7);
  std::vector<float> values(100000);
  for (float &v : values) {
    uint32_t bits = rng();
    std::memcpy(&v, &bits, 4);
    if (std::isnan(v))
      v = 1.0f;
  }
  std::vector<uint16_t> bulk(values.size());
  fromF32(values.data(), bulk.data(), DType::F16, values.size());
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(bulk[i], f32ToF16(values[i])) << values[i];
}

} // namespace
