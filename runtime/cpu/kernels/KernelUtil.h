// Helpers shared by the CPU kernels.
#ifndef AMPC_RUNTIME_CPU_KERNELUTIL_H
#define AMPC_RUNTIME_CPU_KERNELUTIL_H

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/core/Convert.h"
#include "runtime/numerics/Exp.h"
#include "runtime/cpu/Kernels.h"

namespace ampc::rt {

/// An f32 view of a tensor: its own data when it is f32, else a widened copy.
/// Elements [at, at + n) of `t` widened to f32 into `dst`.
inline void readF32(const TensorRef &t, int64_t at, int64_t n, float *dst) {
  toF32(static_cast<const char *>(t.data) + at * dtypeSize(t.dtype), t.dtype, dst, n);
}

/// `n` f32 values rounded into elements [at, at + n) of `t`.
inline void writeF32(const float *src, const TensorRef &t, int64_t at, int64_t n) {
  fromF32(src, static_cast<char *>(t.data) + at * dtypeSize(t.dtype), t.dtype, n);
}

/// A one-element tensor's value as f32.
inline float scalarF32(const TensorRef &t) {
  float v;
  toF32(t.data, t.dtype, &v, 1);
  return v;
}

/// Row `r` (`width` elements) of `t` as f32: a view of an f32 tensor, else
/// widened into `scratch`.
inline const float *rowF32(const TensorRef &t, int64_t r, int64_t width,
                           std::vector<float> &scratch) {
  if (t.dtype == DType::F32)
    return t.as<float>() + r * width;
  scratch.resize(width);
  readF32(t, r * width, width, scratch.data());
  return scratch.data();
}

/// An f32 buffer left uninitialised (a std::vector would zero it first): the
/// widened copies below are written whole before they are read.
inline std::unique_ptr<float[]> uninitialisedF32(int64_t n) {
  return std::unique_ptr<float[]>(new float[std::max<int64_t>(n, 1)]);
}

class F32In {
public:
  /// With `roundTo` f16/bf16, an f32 tensor is read rounded to that dtype.
  explicit F32In(const TensorRef &t, DType roundTo = DType::F32) {
    if (t.dtype == DType::F32 && roundTo == DType::F32) {
      p_ = t.as<float>();
      return;
    }
    copy_ = uninitialisedF32(t.size());
    if (t.dtype == DType::F32)
      roundThrough(t.as<float>(), roundTo, copy_.get(), t.size());
    else
      toF32(t.data, t.dtype, copy_.get(), t.size());
    p_ = copy_.get();
  }
  const float *data() const { return p_; }
  float operator[](int64_t i) const { return p_[i]; }

private:
  std::unique_ptr<float[]> copy_;
  const float *p_;
};

/// An f32 destination for a tensor: the tensor itself when it is f32, else a
/// scratch buffer that commit() rounds into the tensor. Either way the
/// kernel writes every element (the tensor's memory is not zeroed).
class F32Out {
public:
  explicit F32Out(const TensorRef &t) : t_(t) {
    if (t.dtype == DType::F32) {
      p_ = t.as<float>();
    } else {
      scratch_ = uninitialisedF32(t.size());
      p_ = scratch_.get();
    }
  }
  float *data() { return p_; }
  float &operator[](int64_t i) { return p_[i]; }
  void commit() {
    if (t_.dtype != DType::F32)
      fromF32(p_, t_.data, t_.dtype, t_.size());
  }

private:
  TensorRef t_;
  std::unique_ptr<float[]> scratch_;
  float *p_;
};

/// Rounds f32 values to `dtype` where it is narrower, as storing them would.
inline void roundIn(float *values, DType dtype, int64_t n) {
  if (dtype == DType::F16 || dtype == DType::BF16)
    roundThrough(values, dtype, values, n);
}

inline bool attrBool(const KernelContext &c, const char *k, bool d) {
  return c.attrs.getBool(k, d);
}
inline int64_t attrInt(const KernelContext &c, const char *k, int64_t d) {
  return c.attrs.getInt(k, d);
}
inline double attrF64(const KernelContext &c, const char *k, double d) {
  return c.attrs.getF64(k, d);
}
inline std::string attrStr(const KernelContext &c, const char *k, const std::string &d) {
  return c.attrs.getStr(k, d);
}
inline std::vector<int64_t> attrInts(const KernelContext &c, const char *k,
                                     std::vector<int64_t> d = {}) {
  return c.attrs.getInts(k, std::move(d));
}

/// Normalises a possibly negative axis.
inline int64_t axisOf(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

/// Row-major strides of a shape, in elements.
inline std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

/// Strides of `shape` aligned to an output of rank `rank`, 0 on broadcast dims.
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &shape, size_t rank) {
  std::vector<int64_t> s(rank, 0), own = stridesOf(shape);
  size_t off = rank - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1)
      s[off + i] = own[i];
  return s;
}

/// Work large enough to pay for threads.
constexpr int64_t kParallelGrain = 1 << 15;

/// On a function of element loops: one copy for AVX-512, one for AVX2 and
/// one for the baseline, the processor's chosen at load time. The loops
/// must only add, multiply, divide, compare and select (the runtime builds
/// with -ffp-contract=off, and these targets imply no FMA), so that every
/// copy computes the same bits, lane by lane (docs/runtime.md, "Element
/// functions"). Name instruction sets, not processors: an "arch=" clone
/// does not inline the functors, and its loops stay scalar. OpenMP's
/// outlined regions are not cloned: call a cloned function from inside the
/// parallel loop (forChunks). GCC only: clang 19 does not clone templates
/// (its builds, such as the sanitizer build, run the baseline's loops).
#if defined(__x86_64__) && !defined(__clang__)
#define AMPC_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define AMPC_VECTOR_CLONES
#endif

/// body(begin, count) over [0, n) in chunks of up to 16,384 elements, on
/// the OpenMP threads when n is large enough to pay for them.
template <typename Body> void forChunks(int64_t n, Body body) {
  constexpr int64_t kChunk = 1 << 14;
  int64_t chunks = (n + kChunk - 1) / kChunk;
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t ch = 0; ch < chunks; ++ch)
    body(ch * kChunk, std::min(kChunk, n - ch * kChunk));
}

/// Where a slice (attributes axes/starts, numpy semantics) of `full` starts.
inline std::vector<int64_t> sliceBegin(const KernelContext &c, const std::vector<int64_t> &full) {
  std::vector<int64_t> axes = attrInts(c, "axes"), starts = attrInts(c, "starts");
  std::vector<int64_t> begin(full.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axisOf(axes[i], full.size()), dim = full[a], s = starts[i];
    s = s < 0 ? s + dim : s;
    begin[a] = std::min(std::max<int64_t>(s, 0), dim);
  }
  return begin;
}

/// Calls `f(partRow, fullOffset)` for every innermost row of a slice `part`
/// of `full` that starts at `begin`; rows are `part.back()` elements long.
template <typename F>
void forEachSliceRow(const std::vector<int64_t> &full, const std::vector<int64_t> &part,
                     const std::vector<int64_t> &begin, F f) {
  int64_t inner = part.empty() ? 1 : part.back();
  if (numElements(part) == 0)
    return;
  std::vector<int64_t> strides = stridesOf(full);
  int64_t rows = numElements(part) / inner, rank = part.size();
  for (int64_t r = 0; r < rows; ++r) {
    int64_t rest = r, offset = rank ? begin.back() : 0;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += (rest % part[d] + begin[d]) * strides[d];
      rest /= part[d];
    }
    f(r, offset);
  }
}

/// The dtype input `i` is rounded to before use (the step's `round_inputs`).
inline DType roundedInput(const KernelContext &c, size_t i) { return c.attrs.roundedInput(i); }

/// Runs `Kernel` (of `Results` results), then writes the rounded copy of
/// result 0 that a step may carry as one more output (kRoundedCopy): the
/// f32 values rounded as a cast rounds them.
template <void (*Kernel)(KernelContext &), size_t Results>
void withRoundedCopy(KernelContext &c) {
  Kernel(c);
  if (c.out.size() > Results) {
    const TensorRef &low = c.out[Results];
    fromF32(c.out[0].as<const float>(), low.data, low.dtype, low.size());
  }
}

/// e[k] = exp(x[k] - max) over a row, with max the row's largest element;
/// returns the sum of e (in double) and sets `max` (Softmax.cpp).
double expShiftedRow(const float *x, int64_t n, float *e, float &max);

/// `n` f16/bf16/f32 elements from one tensor to another of the same dtype.
inline void copyBytes(const TensorRef &from, const TensorRef &to) {
  if (from.data != to.data)
    std::memcpy(to.data, from.data, to.bytes());
}

} // namespace ampc::rt

#endif
