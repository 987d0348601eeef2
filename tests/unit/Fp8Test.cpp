// FP8 conversions (runtime/numerics/Fp8.h) against the formats' definitions:
// every code's value, every midpoint between neighbouring codes rounding to
// the even one, saturation, underflow, signed zero and NaN. The CLI test
// (tests/lit/cli/fp8.test) runs 2^20 f32 inputs through a graph's casts.
#include <cmath>

#include <gtest/gtest.h>

#include "runtime/core/Convert.h"
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
