// The finite test on bits: a value is inf or NaN exactly when its exponent
// field is all ones. Testing bits needs no conversion, so f16/bf16 gradients
// are checked where they lie and the loops vectorise. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_FINITE_H
#define AMPC_RUNTIME_NUMERICS_FINITE_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

constexpr uint32_t kF32Exponent = 0x7f800000u;
constexpr uint16_t kF16Exponent = 0x7c00u;
constexpr uint16_t kBf16Exponent = 0x7f80u;

/// 1 when `bits` (of a float whose exponent mask is `exponent`) is inf or
/// NaN, else 0: an integer to OR-reduce without branches.
template <typename Bits> AMPC_HD Bits nonFiniteBits(Bits bits, Bits exponent) {
  return Bits((bits & exponent) == exponent);
}

AMPC_HD bool isNonFiniteF32(float v) { return nonFiniteBits(bitsOf(v), kF32Exponent) != 0; }
AMPC_HD bool isNonFiniteF16(uint16_t h) { return nonFiniteBits(h, kF16Exponent) != 0; }
AMPC_HD bool isNonFiniteBf16(uint16_t b) { return nonFiniteBits(b, kBf16Exponent) != 0; }

} // namespace ampc::num

#endif
