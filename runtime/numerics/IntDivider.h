// Division of element indices by a divisor fixed at launch: the coordinates
// of an element from its flat index. A GPU has no integer divide, and a
// 64-bit division is a routine of dozens of instructions, so a kernel that
// divides its index four times an element spends more time on that than
// on its memory (docs/cuda.md, "Index arithmetic"). IntDivider<uint32_t>
// divides by a multiply-high, an add and a shift (Granlund and Montgomery,
// "Division by invariant integers using multiplication", 1994; PyTorch's
// IntDivider), exactly for every numerator below 2^31 and divisor from 1
// to 2^31; IntDivider<uint64_t> divides, for tensors past that. Host and
// device code.
#ifndef AMPC_RUNTIME_NUMERICS_INTDIVIDER_H
#define AMPC_RUNTIME_NUMERICS_INTDIVIDER_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

template <typename T> struct DivMod {
  T quotient, remainder;
};

template <typename T> struct IntDivider;

template <> struct IntDivider<uint32_t> {
  /// The largest numerator (and divisor) it divides exactly.
  static constexpr uint64_t kLimit = uint64_t(1) << 31;
  uint32_t divisor, magic, shift;

  IntDivider() = default;
  /// d from 1 to 2^31.
  explicit IntDivider(uint32_t d) : divisor(d), magic(0), shift(0) {
    while ((uint64_t(1) << shift) < d)
      ++shift;
    // ceil(2^(32 + shift) / d) - 2^32: the quotient's multiplier less the
    // 2^32 that the add of n itself supplies.
    magic = uint32_t(((uint64_t(1) << 32) * ((uint64_t(1) << shift) - d)) / d + 1);
  }
  /// n below 2^31.
  AMPC_HD uint32_t div(uint32_t n) const {
#if defined(__CUDA_ARCH__)
    uint32_t high = __umulhi(n, magic);
#else
    uint32_t high = uint32_t((uint64_t(n) * magic) >> 32);
#endif
    return (high + n) >> shift; // high <= n < 2^31: no overflow
  }
  AMPC_HD DivMod<uint32_t> divMod(uint32_t n) const {
    uint32_t q = div(n);
    return {q, n - q * divisor};
  }
};

template <> struct IntDivider<uint64_t> {
  uint64_t divisor;
  IntDivider() = default;
  explicit IntDivider(uint64_t d) : divisor(d) {}
  AMPC_HD uint64_t div(uint64_t n) const { return n / divisor; }
  AMPC_HD DivMod<uint64_t> divMod(uint64_t n) const { return {n / divisor, n % divisor}; }
};

} // namespace ampc::num

#endif
