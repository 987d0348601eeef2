#include "compiler/DenseData.h"

#include <cmath>
#include <cstring>
#include <vector>

using namespace mlir;

namespace ampc {

namespace {

/// `n` elements of `bytes` each, written by `put(i, where)` into one raw
/// buffer: a weight of millions of elements as one copy, not millions of
/// APFloats (an ONNX import of ResNet-50 spent most of its time there).
template <typename Put>
DenseElementsAttr fromRaw(RankedTensorType type, size_t n, size_t bytes, Put put) {
  std::vector<char> raw(n * bytes);
  for (size_t i = 0; i < n; ++i)
    put(i, raw.data() + i * bytes);
  return DenseElementsAttr::getFromRawBuffer(type, raw);
}

} // namespace

DenseElementsAttr denseFromDoubles(RankedTensorType type, ArrayRef<double> data) {
  Type element = type.getElementType();
  if (auto f = dyn_cast<FloatType>(element)) {
    if (f.isF32()) // C++'s double-to-float conversion rounds to nearest even
      return fromRaw(type, data.size(), 4, [&](size_t i, char *to) {
        float v = (float)data[i];
        std::memcpy(to, &v, 4);
      });
    if (f.isF64())
      return fromRaw(type, data.size(), 8,
                     [&](size_t i, char *to) { std::memcpy(to, &data[i], 8); });
    // f16, bf16, fp8: rounded from the double once (through f32 would round twice).
    size_t bytes = (f.getWidth() + 7) / 8;
    return fromRaw(type, data.size(), bytes, [&](size_t i, char *to) {
      APFloat v(data[i]);
      bool lost;
      v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      uint64_t bits = v.bitcastToAPInt().getZExtValue();
      std::memcpy(to, &bits, bytes); // little-endian, as MLIR's raw buffers are
    });
  }
  // Integers saturate to the type's range (NaN reads as 0): a double may
  // hold values no int64 does, such as ONNX's INT64_MAX (2^63 as a double).
  unsigned width = element.getIntOrFloatBitWidth();
  double hi = std::ldexp(1.0, width - 1), lo = -hi;
  auto saturated = [&](double d) -> int64_t {
    if (width == 1)
      return d != 0 && d == d;
    if (d >= hi)
      return width >= 64 ? INT64_MAX : (int64_t(1) << (width - 1)) - 1;
    if (d <= lo)
      return width >= 64 ? INT64_MIN : -(int64_t(1) << (width - 1));
    return d == d ? (int64_t)d : 0;
  };
  if (width == 1) { // bools are bit-packed in a raw buffer: go through APInt
    SmallVector<APInt> values;
    for (double d : data)
      values.push_back(APInt(1, saturated(d)));
    return DenseElementsAttr::get(type, values);
  }
  size_t bytes = width / 8;
  return fromRaw(type, data.size(), bytes, [&](size_t i, char *to) {
    int64_t v = saturated(data[i]);
    std::memcpy(to, &v, bytes); // the low bytes, little-endian
  });
}

std::vector<double> denseToDoubles(ElementsAttr value) {
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return {};
  Type element = dense.getElementType();
  size_t n = dense.getNumElements();
  std::vector<double> out(n);
  if (element.isInteger(1)) { // bit-packed
    size_t i = 0;
    for (APInt v : dense.getValues<APInt>())
      out[i++] = v.getZExtValue();
    return out;
  }
  // The raw data, read in place: one element when the constant is a splat.
  ArrayRef<char> raw = dense.getRawData();
  size_t bytes = (element.getIntOrFloatBitWidth() + 7) / 8, step = dense.isSplat() ? 0 : bytes;
  auto bitsAt = [&](size_t i) {
    uint64_t bits = 0;
    std::memcpy(&bits, raw.data() + i * step, bytes);
    return bits;
  };
  auto f = dyn_cast<FloatType>(element);
  for (size_t i = 0; i < n; ++i) {
    uint64_t bits = bitsAt(i);
    if (!f) { // sign-extended from its width
      unsigned shift = 64 - 8 * bytes;
      out[i] = (double)(int64_t(bits << shift) >> shift);
    } else if (f.isF64()) {
      std::memcpy(&out[i], &bits, 8);
    } else if (f.isF32()) {
      float v;
      std::memcpy(&v, &bits, 4);
      out[i] = v;
    } else { // f16, bf16 and fp8 widen to f32 exactly
      APFloat v(f.getFloatSemantics(), APInt(f.getWidth(), bits));
      bool lost;
      v.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
      out[i] = v.convertToFloat();
    }
  }
  return out;
}

} // namespace ampc
