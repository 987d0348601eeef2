#include "runtime/core/DType.h"

namespace ampc::rt {

size_t dtypeSize(DType t) {
  switch (t) {
  case DType::F32: case DType::I32: return 4;
  case DType::F16: case DType::BF16: return 2;
  case DType::F64: case DType::I64: return 8;
  case DType::I1: case DType::F8E4M3: case DType::F8E5M2: return 1;
  }
  return 0;
}

const char *dtypeName(DType t) {
  switch (t) {
  case DType::F32: return "f32";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::F64: return "f64";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::I1: return "i1";
  case DType::F8E4M3: return "f8e4m3";
  case DType::F8E5M2: return "f8e5m2";
  }
  return "?";
}

std::optional<DType> parseDType(const std::string &name) {
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I32, DType::I64,
                  DType::I1, DType::F8E4M3, DType::F8E5M2})
    if (name == dtypeName(t))
      return t;
  return std::nullopt;
}

int64_t numElements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

} // namespace ampc::rt
