// FP8 scalars (docs/runtime.md, "FP8"): OCP's E4M3FN (bias 7, no infinity,
// largest 448) and E5M2 (bias 15, IEEE-like, largest 57344). Narrowing
// rounds to nearest even from the exact value (a double holds every f32,
// f16 and bf16); a finite result beyond the largest saturates to it, and so
// does ±inf, as CUDA's __NV_SATFINITE conversions do; NaN becomes the
// canonical NaN 0x7F of either format (sign and payload dropped, as CUDA's
// conversion from f32 does). Widening is exact. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_FP8_H
#define AMPC_RUNTIME_NUMERICS_FP8_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

struct Fp8Format {
  int mantissaBits, bias;
  uint8_t maxCode; // the largest finite magnitude's code
  bool hasInfinity;
};

constexpr Fp8Format kE4M3{3, 7, 0x7E, false};
constexpr Fp8Format kE5M2{2, 15, 0x7B, true};

AMPC_HD uint8_t toFp8(double value, Fp8Format f) {
  uint64_t bits;
  memcpy(&bits, &value, 8);
  uint8_t sign = uint8_t((bits >> 63) << 7);
  uint64_t a = bits & 0x7FFFFFFFFFFFFFFFull;
  if (a > 0x7FF0000000000000ull) // NaN: the canonical one of both formats
    return 0x7F;
  if (a == 0)
    return sign;
  int exponent = int(a >> 52) - 1023; // inf: 1024, beyond any format
  int emin = 1 - f.bias, emaxField = f.hasInfinity ? 30 : 15;
  if (exponent + f.bias > emaxField)
    return sign | f.maxCode;
  uint64_t significand = (a & 0xFFFFFFFFFFFFFull) | (1ull << 52);
  if (a < (1ull << 52)) // a double subnormal: far below any FP8 value
    return sign;
  // The code counts steps of the format's spacing at this exponent: below
  // the normal range, the subnormal spacing 2^(emin - mantissaBits).
  int shift = 52 - f.mantissaBits + (exponent < emin ? emin - exponent : 0);
  if (shift > 54) // below a quarter of the smallest subnormal
    return sign;
  uint64_t steps = significand >> shift, rest = significand & ((1ull << shift) - 1),
           half = 1ull << (shift - 1);
  if (rest > half || (rest == half && (steps & 1)))
    ++steps;
  // A normal value's steps hold the implicit bit; rounding up to 2.0 carries
  // into the exponent field.
  uint32_t code = exponent < emin ? uint32_t(steps)
                                  : (uint32_t(exponent + f.bias) << f.mantissaBits) +
                                        uint32_t(steps - (1ull << f.mantissaBits));
  return sign | uint8_t(code > f.maxCode ? f.maxCode : code);
}

AMPC_HD float fromFp8(uint8_t code, Fp8Format f) {
  uint32_t sign = uint32_t(code & 0x80) << 24;
  int exponentBits = 7 - f.mantissaBits;
  uint32_t exponent = (code >> f.mantissaBits) & ((1u << exponentBits) - 1),
           mantissa = code & ((1u << f.mantissaBits) - 1);
  uint32_t top = (1u << exponentBits) - 1;
  if (f.hasInfinity && exponent == top)
    return floatOf(sign | 0x7F800000u | (mantissa ? 0x400000u : 0u));
  if (!f.hasInfinity && exponent == top && mantissa == (1u << f.mantissaBits) - 1)
    return floatOf(sign | 0x7FC00000u);
  if (exponent == 0) { // subnormal: mantissa * 2^(1 - bias - mantissaBits), exact
    float v = float(mantissa) * floatOf(uint32_t(127 + 1 - f.bias - f.mantissaBits) << 23);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exponent - f.bias + 127) << 23) | (mantissa << (23 - f.mantissaBits)));
}

AMPC_HD uint8_t f32ToE4M3(float v) { return toFp8(double(v), kE4M3); }
AMPC_HD uint8_t f32ToE5M2(float v) { return toFp8(double(v), kE5M2); }
AMPC_HD float e4m3ToF32(uint8_t c) { return fromFp8(c, kE4M3); }
AMPC_HD float e5m2ToF32(uint8_t c) { return fromFp8(c, kE5M2); }

} // namespace ampc::num

#endif
