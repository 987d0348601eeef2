#include "runtime/core/BufferInit.h"

#include <cmath>
#include <random>

#include "runtime/core/Convert.h"

namespace ampc::rt {
namespace {

uint64_t hashName(const std::string &s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (char ch : s)
    h = (h ^ (unsigned char)ch) * 1099511628211ull;
  return h;
}

} // namespace

std::pair<double, double> fans(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return {1, 1};
  if (shape.size() == 1)
    return {double(shape[0]), double(shape[0])};
  if (shape.size() == 2)
    return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (size_t i = 1; i + 1 < shape.size(); ++i)
    receptive *= shape[i];
  return {receptive * shape.back(), receptive * shape[0]};
}

std::vector<float> initialValues(const Plan &plan, const Buffer &b, uint64_t seed) {
  std::string kind = b.init.value("kind", "zeros");
  auto field = [&](const char *k, double d) { return b.init.value(k, d); };
  // An f32 master (AMP O2) or a weight average starts from its param's
  // values: the same init, drawn from the same stream.
  std::mt19937_64 rng(hashName(initialValuesOwner(plan, b.name), seed));
  std::vector<float> values(numElements(b.shape), 0.0f);
  auto [fanIn, fanOut] = fans(b.shape);
  if (kind == "data") {
    if (b.data.size() != values.size())
      throw PlanError("buffer '" + b.name + "': its init data does not fill the shape");
    std::copy(b.data.begin(), b.data.end(), values.begin());
  } else if (kind == "ones" || kind == "constant") {
    std::fill(values.begin(), values.end(), kind == "ones" ? 1.0f : float(field("value", 0)));
  } else if (kind == "normal" || kind == "kaiming_normal") {
    double mean = kind == "normal" ? field("mean", 0) : 0;
    double std = kind == "normal" ? field("std", 1) : std::sqrt(2.0 / fanIn);
    std::normal_distribution<double> dist(mean, std);
    for (float &v : values)
      v = float(dist(rng));
  } else if (kind == "uniform" || kind == "xavier_uniform") {
    double limit = std::sqrt(6.0 / (fanIn + fanOut));
    double low = kind == "uniform" ? field("low", 0) : -limit;
    double high = kind == "uniform" ? field("high", 1) : limit;
    std::uniform_real_distribution<double> dist(low, high);
    for (float &v : values)
      v = float(dist(rng));
  } else if (kind != "zeros") {
    throw PlanError("buffer '" + b.name + "': unknown init kind '" + kind + "'");
  }
  return values;
}

std::vector<std::byte> constBytes(const Buffer &b) {
  std::vector<std::byte> bytes(b.bytes);
  if (isStoredFloat(b.dtype)) {
    std::vector<float> values(b.data.begin(), b.data.end());
    fromF32(values.data(), bytes.data(), b.dtype, values.size());
    return bytes;
  }
  for (size_t i = 0; i < b.data.size(); ++i)
    storeElement(bytes.data(), b.dtype, i, b.data[i]);
  return bytes;
}

} // namespace ampc::rt
