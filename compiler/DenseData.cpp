#include "compiler/DenseData.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

using namespace mlir;

namespace ampc {

DenseElementsAttr denseFromDoubles(RankedTensorType type, ArrayRef<double> data) {
  Type element = type.getElementType();
  if (auto f = dyn_cast<FloatType>(element)) {
    SmallVector<APFloat> values;
    values.reserve(data.size());
    for (double d : data) {
      APFloat v(d);
      bool lost;
      v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      values.push_back(v);
    }
    return DenseElementsAttr::get(type, values);
  }
  // Integers saturate to the type's range (NaN reads as 0): a double may
  // hold values no int64 does, such as ONNX's INT64_MAX (2^63 as a double).
  unsigned width = element.getIntOrFloatBitWidth();
  double hi = std::ldexp(1.0, width - 1), lo = -hi;
  SmallVector<APInt> values;
  values.reserve(data.size());
  for (double d : data) {
    int64_t v = 0; // NaN
    if (width == 1)
      v = d != 0 && d == d;
    else if (d >= hi)
      v = width >= 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
    else if (d <= lo)
      v = width >= 64 ? INT64_MIN : -(int64_t(1) << (width - 1));
    else if (d == d)
      v = (int64_t)d;
    values.push_back(APInt(width, v, true));
  }
  return DenseElementsAttr::get(type, values);
}

std::vector<double> denseToDoubles(ElementsAttr value) {
  std::vector<double> out;
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return out;
  out.reserve(dense.getNumElements());
  if (isa<FloatType>(dense.getElementType())) {
    bool isF64 = dense.getElementType().isF64();
    for (APFloat v : dense.getValues<APFloat>()) {
      bool lost;
      if (!isF64) {
        v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
        out.push_back(shortestForFloat(v.convertToFloat()));
      } else {
        out.push_back(v.convertToDouble());
      }
    }
  } else if (dense.getElementType().isInteger(1)) {
    for (APInt v : dense.getValues<APInt>())
      out.push_back(v.getZExtValue());
  } else {
    for (APInt v : dense.getValues<APInt>())
      out.push_back((double)v.getSExtValue());
  }
  return out;
}

double shortestForFloat(float v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf) - 1, v);
  *res.ptr = '\0';
  return std::strtod(buf, nullptr);
}

} // namespace ampc
