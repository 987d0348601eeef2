// f16 and bf16: 16-bit storage, exact round-to-nearest-even conversion from
// f32 (overflow to inf, subnormals kept, NaN stays NaN), exact widening.
#ifndef AMPC_RUNTIME_HALF_H
#define AMPC_RUNTIME_HALF_H

#include <cstddef>
#include <cstdint>

#include "runtime/DType.h"

namespace ampc::rt {

uint16_t f32ToF16(float value);
float f16ToF32(uint16_t bits);
uint16_t f32ToBf16(float value);
float bf16ToF32(uint16_t bits);

/// `n` elements of any dtype to f32 (f16 with F16C where the CPU has it).
void toF32(const void *src, DType dtype, float *dst, size_t n);
/// `n` f32 values to any dtype, rounding to nearest even for f16/bf16.
void fromF32(const float *src, void *dst, DType dtype, size_t n);
/// dst = toF32(fromF32(src)): f32 values rounded to `dtype` and widened back
/// in one pass (a cast to f16/bf16 fused into a kernel that widens anyway).
void roundThrough(const float *src, DType dtype, float *dst, size_t n);

} // namespace ampc::rt

#endif
