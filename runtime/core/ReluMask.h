// The relu mask a `matmul_bias` step with activation relu stores for the
// backward (`matmul_act_grad`): one bit per element of the result, set where
// the result is positive, packed as cuBLASLt's RELU_AUX epilogue packs it
// (docs/runtime.md, "GEMM epilogues"). Row r's bits are the i32 words
// [r, 0 .. cols/32): bit c % 32 of word c / 32 is column c. cuBLASLt pads each
// row to 128 bits; requiring cols % 128 == 0 leaves no padding, so every bit
// of the mask is defined and a backend's mask compares bit for bit.
#ifndef AMPC_RUNTIME_CORE_RELUMASK_H
#define AMPC_RUNTIME_CORE_RELUMASK_H

#include <cstdint>
#include <vector>

namespace ampc::rt {

constexpr int64_t kReluMaskRowBits = 128;

/// Whether a result of `cols` columns can keep a relu mask.
inline bool maskableColumns(int64_t cols) { return cols > 0 && cols % kReluMaskRowBits == 0; }

/// The i32 shape of the mask of a [rows, cols] result.
inline std::vector<int64_t> reluMaskShape(int64_t rows, int64_t cols) { return {rows, cols / 32}; }

} // namespace ampc::rt

#endif
