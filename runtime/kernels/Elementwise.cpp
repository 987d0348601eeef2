// Elementwise kernels: binary ops with numpy broadcasting, unary math and
// activations, scale, dropout, cast and fill.
#include <cmath>

#include "runtime/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

/// Strides of `shape` aligned to an output of rank `rank`, 0 on broadcast dims.
std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape, size_t rank) {
  std::vector<int64_t> s(rank, 0), own = stridesOf(shape);
  size_t off = rank - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1)
      s[off + i] = own[i];
  return s;
}

template <typename T, typename Op>
void broadcastLoop(const T *a, const std::vector<int64_t> &as, const T *b,
                   const std::vector<int64_t> &bs, T *out, const std::vector<int64_t> &os,
                   Op op) {
  int64_t n = numElements(os);
  if (as == os && bs == os) {
#pragma omp parallel for if (n > kParallelGrain)
    for (int64_t i = 0; i < n; ++i)
      out[i] = op(a[i], b[i]);
    return;
  }
  if (os.empty() || n == 0) {
    if (n)
      out[0] = op(a[0], b[0]);
    return;
  }
  size_t rank = os.size();
  std::vector<int64_t> sa = broadcastStrides(as, rank), sb = broadcastStrides(bs, rank);
  int64_t inner = os.back(), outer = n / inner, ia = sa.back(), ib = sb.back();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t o = 0; o < outer; ++o) {
    int64_t rest = o, offA = 0, offB = 0;
    for (int64_t d = (int64_t)rank - 2; d >= 0; --d) {
      int64_t idx = rest % os[d];
      rest /= os[d];
      offA += idx * sa[d];
      offB += idx * sb[d];
    }
    T *po = out + o * inner;
    for (int64_t i = 0; i < inner; ++i)
      po[i] = op(a[offA + i * ia], b[offB + i * ib]);
  }
}

template <typename Op> void binary(KernelContext &c, Op op) {
  const TensorRef &a = c.in[0], &b = c.in[1], &o = c.out[0];
  switch (o.dtype) {
  case DType::I32:
    return broadcastLoop(a.as<int32_t>(), a.shape, b.as<int32_t>(), b.shape, o.as<int32_t>(),
                         o.shape, op);
  case DType::I64:
    return broadcastLoop(a.as<int64_t>(), a.shape, b.as<int64_t>(), b.shape, o.as<int64_t>(),
                         o.shape, op);
  case DType::I1:
    c.fail("arithmetic on i1 is not supported");
  default: {
    F32In fa(a, roundedInput(c, 0)), fb(b, roundedInput(c, 1));
    F32Out fo(o);
    broadcastLoop(fa.data(), a.shape, fb.data(), b.shape, fo.data(), o.shape, op);
    fo.commit();
  }
  }
}

template <typename Op> void unary(KernelContext &c, Op op) {
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  int64_t n = c.out[0].size();
  const float *px = x.data();
  float *py = y.data();
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t i = 0; i < n; ++i)
    py[i] = op(px[i]);
  y.commit();
}

uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void dropout(KernelContext &c) {
  double rate = attrF64(c, "rate", 0.5);
  if (!c.training || rate == 0.0) {
    copyBytes(c.in[0], c.out[0]);
    return;
  }
  uint64_t stream = mix(mix(c.seed ^ (uint64_t)attrInt(c, "seed", 0)) ^ c.iteration);
  float keep = 1.0f / float(1.0 - rate);
  F32In x(c.in[0]);
  F32Out y(c.out[0]);
  int64_t n = c.out[0].size();
  for (int64_t i = 0; i < n; ++i) {
    double u = (mix(stream + (uint64_t)i) >> 11) * 0x1.0p-53;
    y[i] = u < rate ? 0.0f : x[i] * keep;
  }
  y.commit();
}

double loadDouble(const TensorRef &t, int64_t i) {
  switch (t.dtype) {
  case DType::F64: return t.as<double>()[i];
  case DType::I32: return t.as<int32_t>()[i];
  case DType::I64: return (double)t.as<int64_t>()[i];
  case DType::I1: return t.as<uint8_t>()[i] ? 1.0 : 0.0;
  default: {
    float f;
    readF32(t, i, 1, &f);
    return f;
  }
  }
}

void storeDouble(const TensorRef &t, int64_t i, double v) {
  switch (t.dtype) {
  case DType::F64: t.as<double>()[i] = v; return;
  case DType::I32: t.as<int32_t>()[i] = (int32_t)v; return;
  case DType::I64: t.as<int64_t>()[i] = (int64_t)v; return;
  case DType::I1: t.as<uint8_t>()[i] = v != 0.0; return;
  default: {
    float f = (float)v;
    writeF32(&f, t, i, 1);
  }
  }
}

void cast(KernelContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  auto small = [](DType t) { return t == DType::F32 || t == DType::F16 || t == DType::BF16; };
  if (x.dtype == y.dtype) {
    copyBytes(x, y);
  } else if (small(x.dtype) && y.dtype == DType::F32) {
    toF32(x.data, x.dtype, y.as<float>(), y.size()); // one pass, no copy
  } else if (x.dtype == DType::F32 && small(y.dtype)) {
    fromF32(x.as<float>(), y.data, y.dtype, y.size());
  } else if (small(x.dtype) && small(y.dtype)) {
    F32In fx(x);
    fromF32(fx.data(), y.data, y.dtype, y.size());
  } else if ((x.dtype == DType::I64 || x.dtype == DType::I32) &&
             (y.dtype == DType::I64 || y.dtype == DType::I32)) {
    for (int64_t i = 0; i < y.size(); ++i)
      if (y.dtype == DType::I64)
        y.as<int64_t>()[i] = x.dtype == DType::I32 ? x.as<int32_t>()[i] : x.as<int64_t>()[i];
      else
        y.as<int32_t>()[i] = x.dtype == DType::I32 ? x.as<int32_t>()[i] : (int32_t)x.as<int64_t>()[i];
  } else {
    for (int64_t i = 0; i < y.size(); ++i)
      storeDouble(y, i, loadDouble(x, i));
  }
}

void fill(KernelContext &c) {
  const TensorRef &y = c.out[0];
  double v = attrF64(c, "value", 0.0);
  for (int64_t i = 0; i < y.size(); ++i)
    storeDouble(y, i, v);
}

} // namespace

void addElementwiseKernels(KernelTable &t) {
  t["add"] = [](KernelContext &c) { binary(c, [](auto a, auto b) { return a + b; }); };
  t["sub"] = [](KernelContext &c) { binary(c, [](auto a, auto b) { return a - b; }); };
  t["mul"] = [](KernelContext &c) { binary(c, [](auto a, auto b) { return a * b; }); };
  t["div"] = [](KernelContext &c) {
    if (!isFloat(c.out[0].dtype))
      for (int64_t i = 0; i < c.in[1].size(); ++i)
        if (loadDouble(c.in[1], i) == 0)
          c.fail("integer division by zero");
    binary(c, [](auto a, auto b) { return a / b; });
  };
  t["maximum"] = [](KernelContext &c) {
    binary(c, [](auto a, auto b) { return a > b || a != a ? a : b; });
  };
  t["minimum"] = [](KernelContext &c) {
    binary(c, [](auto a, auto b) { return a < b || a != a ? a : b; });
  };
  t["neg"] = [](KernelContext &c) { unary(c, [](float x) { return -x; }); };
  t["abs"] = [](KernelContext &c) { unary(c, [](float x) { return std::fabs(x); }); };
  t["relu"] = [](KernelContext &c) { unary(c, [](float x) { return x > 0.0f || x != x ? x : 0.0f; }); };
  t["tanh"] = [](KernelContext &c) { unary(c, [](float x) { return std::tanh(x); }); };
  t["sigmoid"] = [](KernelContext &c) {
    unary(c, [](float x) { return 1.0f / (1.0f + std::exp(-x)); });
  };
  t["gelu"] = [](KernelContext &c) {
    if (attrBool(c, "approximate", false))
      unary(c, [](float x) {
        return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x)));
      });
    else
      unary(c, [](float x) { return 0.5f * x * (1.0f + std::erf(x * 0.70710678f)); });
  };
  t["exp"] = [](KernelContext &c) { unary(c, [](float x) { return std::exp(x); }); };
  t["log"] = [](KernelContext &c) { unary(c, [](float x) { return std::log(x); }); };
  t["sqrt"] = [](KernelContext &c) { unary(c, [](float x) { return std::sqrt(x); }); };
  t["rsqrt"] = [](KernelContext &c) { unary(c, [](float x) { return 1.0f / std::sqrt(x); }); };
  t["square"] = [](KernelContext &c) { unary(c, [](float x) { return x * x; }); };
  t["pow"] = [](KernelContext &c) {
    float e = (float)attrF64(c, "exponent", 1.0);
    unary(c, [e](float x) { return std::pow(x, e); });
  };
  t["scale"] = [](KernelContext &c) {
    float s = (float)attrF64(c, "scale", 1.0), b = (float)attrF64(c, "bias", 0.0);
    unary(c, [s, b](float x) { return x * s + b; });
  };
  t["dropout"] = dropout;
  t["cast"] = cast;
  t["fill"] = fill;
}

} // namespace ampc::rt
