// f16 and bf16 scalars: exact round-to-nearest-even conversion from f32
// (overflow to inf, subnormals kept, NaN stays a quiet NaN) and exact
// widening. Host and device code (docs/runtime.md, "Numerics").
#ifndef AMPC_RUNTIME_NUMERICS_HALF_H
#define AMPC_RUNTIME_NUMERICS_HALF_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

/// The rounding spelled out in integer steps: the host's conversion, and
/// the device's for NaN (f32ToF16).
AMPC_HD uint16_t f32ToF16Bits(float value) {
  uint32_t f = bitsOf(value);
  uint16_t sign = (f >> 16) & 0x8000u;
  f &= 0x7FFFFFFFu;
  if (f >= 0x7F800000u) // inf, or NaN made quiet
    return sign | (f > 0x7F800000u ? 0x7E00u | ((f >> 13) & 0x3FFu) : 0x7C00u);
  if (f >= 0x477FF000u) // 65520 and above round to inf
    return sign | 0x7C00u;
  if (f < 0x38800000u) { // below 2^-14: f16 subnormal or zero
    if (f < 0x33000000u) // below 2^-25: rounds to zero
      return sign;
    uint32_t exponent = f >> 23, mantissa = (f & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exponent;
    uint32_t half = mantissa >> shift, rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (half & 1)))
      ++half;
    return sign | half;
  }
  uint32_t half = (f >> 13) - (112u << 10), rest = f & 0x1FFFu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1)))
    ++half; // a carry into the exponent is the right result
  return sign | half;
}

/// f32 to f16. On the device, the hardware's conversion (cvt.rn.f16.f32:
/// nearest even, inf on overflow, subnormals kept) gives the same bits as
/// f32ToF16Bits in a fraction of the instructions, except for NaN, whose
/// payload it does not keep; tests/cuda/numerics-device-check.cu compares
/// the two on every f32.
AMPC_HD uint16_t f32ToF16(float value) {
#if defined(__CUDA_ARCH__)
  if (value == value) {
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(value));
    return h;
  }
#endif
  return f32ToF16Bits(value);
}

AMPC_HD float f16ToF32(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000u) << 16, exponent = (h >> 10) & 0x1Fu,
           mantissa = h & 0x3FFu;
  if (exponent == 0) {
    float v = mantissa * 5.9604644775390625e-08f; // mantissa * 2^-24, exact
    return sign ? -v : v;
  }
  if (exponent == 31)
    return floatOf(sign | 0x7F800000u | (mantissa << 13));
  return floatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

AMPC_HD uint16_t f32ToBf16(float value) {
  uint32_t f = bitsOf(value);
  if ((f & 0x7FFFFFFFu) > 0x7F800000u)
    return (f >> 16) | 0x40u; // quiet NaN
  f += 0x7FFFu + ((f >> 16) & 1u);
  return f >> 16;
}

AMPC_HD float bf16ToF32(uint16_t b) { return floatOf(uint32_t(b) << 16); }

} // namespace ampc::num

#endif
