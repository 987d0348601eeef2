// Element types of the runtime, and views of tensors in memory.
#ifndef AMPC_RUNTIME_CORE_DTYPE_H
#define AMPC_RUNTIME_CORE_DTYPE_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

/// F8E4M3 and F8E5M2 are OCP's FP8 formats (E4M3FN: no infinity), stored
/// and converted but not computed in: kernels take them only where their
/// signature says so (cast, data movement).
enum class DType : uint8_t { F32, F16, BF16, F64, I32, I64, I1, F8E4M3, F8E5M2 };

size_t dtypeSize(DType t);
const char *dtypeName(DType t);
std::optional<DType> parseDType(const std::string &name);
/// A float dtype kernels compute in (FP8 is not: isFp8, isStoredFloat).
inline bool isFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 || t == DType::F64;
}
inline bool isFp8(DType t) { return t == DType::F8E4M3 || t == DType::F8E5M2; }
/// Holds float values: what data files, weights and initialisers fill.
inline bool isStoredFloat(DType t) { return isFloat(t) || isFp8(t); }

/// f32, f16 or bf16: the dtypes float kernels compute in f32 and round to.
inline bool isComputeFloat(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}

int64_t numElements(const std::vector<int64_t> &shape);

/// A tensor in memory: a pointer with its dtype and shape (row-major).
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t size() const { return numElements(shape); }
  size_t bytes() const { return size() * dtypeSize(dtype); }
  int64_t rank() const { return shape.size(); }
  int64_t dim(int64_t i) const { return shape[i < 0 ? i + rank() : i]; }
  template <typename T> T *as() const { return static_cast<T *>(data); }
};

} // namespace ampc::rt

#endif
