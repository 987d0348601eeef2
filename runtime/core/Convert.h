// Bulk conversions between the runtime's dtypes and f32 on the host: f16
// with the CPU's F16C instructions where present (the same bits as the exact
// scalar path in numerics/Half.h), large arrays split over OpenMP threads.
#ifndef AMPC_RUNTIME_CORE_CONVERT_H
#define AMPC_RUNTIME_CORE_CONVERT_H

#include <cmath>
#include <cstddef>

#include "runtime/core/DType.h"
#include "runtime/numerics/Fp8.h"
#include "runtime/numerics/Half.h"

namespace ampc::rt {

// The scalar conversions, for host code that works in ampc::rt.
using num::bf16ToF32;
using num::f16ToF32;
using num::f32ToBf16;
using num::f32ToF16;

/// `n` elements of any dtype to f32.
void toF32(const void *src, DType dtype, float *dst, size_t n);
/// `n` f32 values to any dtype, rounding to nearest even for f16, bf16 and
/// FP8 (FP8 saturating: numerics/Fp8.h).
void fromF32(const float *src, void *dst, DType dtype, size_t n);
/// dst = toF32(fromF32(src)): f32 values rounded to `dtype` and widened back
/// in one pass (a cast to f16/bf16 fused into a kernel that widens anyway).
void roundThrough(const float *src, DType dtype, float *dst, size_t n);

/// A double as the nearest float, with values beyond float's range going to
/// infinity (a plain conversion of those is undefined behaviour in C++).
inline float narrow(double v) {
  constexpr double top = 3.4028234663852886e38;
  return v > top ? HUGE_VALF : v < -top ? -HUGE_VALF : (float)v;
}

/// Element `i` of an array of `dtype` as a double (i1 as 0 or 1).
double loadElement(const void *data, DType dtype, int64_t i);
/// Stores `value` as element `i`: floats rounded to nearest even, integers
/// truncated, i1 as value != 0.
void storeElement(void *data, DType dtype, int64_t i, double value);

/// Converts `n` elements from `from` to `to`, as storeElement rounds.
void convertElements(const void *src, DType from, void *dst, DType to, int64_t n);

} // namespace ampc::rt

#endif
