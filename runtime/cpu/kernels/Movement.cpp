// Data movement on raw bytes, for any dtype: reshape, flatten, identity,
// transpose, concat, slice and its backward, and the embedding gather with
// its backward (a scatter-add).
#include <cstring>

#include "runtime/cpu/kernels/KernelUtil.h"

namespace ampc::rt {
namespace {

void copy(KernelContext &c) { copyBytes(c.in[0], c.out[0]); }

/// One output row of a transpose: `width` elements of `Bytes` each, read
/// `step` elements apart in the input.
template <size_t Bytes> void gatherRow(const char *in, int64_t step, int64_t width, char *out) {
  for (int64_t j = 0; j < width; ++j)
    std::memcpy(out + j * Bytes, in + j * step * Bytes, Bytes);
}

/// Output row by output row, on the threads: a row whose input elements
/// are adjacent (the last dimension stays last, as in attention's head
/// split) is one copy, another a strided gather of fixed-size elements.
void transpose(KernelContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  std::vector<int64_t> perm = attrInts(c, "perm");
  size_t es = dtypeSize(x.dtype), rank = x.shape.size();
  int64_t n = y.size();
  if (n == 0)
    return;
  if (rank == 0) {
    std::memcpy(y.data, x.data, es);
    return;
  }
  std::vector<int64_t> xs = stridesOf(x.shape), src(rank);
  for (size_t i = 0; i < rank; ++i)
    src[i] = xs[perm[i]];
  int64_t width = y.shape.back(), rows = n / width, step = src.back();
  const char *in = static_cast<const char *>(x.data);
  char *out = static_cast<char *>(y.data);
#pragma omp parallel for if (n > kParallelGrain)
  for (int64_t r = 0; r < rows; ++r) {
    int64_t offset = 0, rest = r;
    for (int64_t d = (int64_t)rank - 2; d >= 0; --d) {
      offset += rest % y.shape[d] * src[d];
      rest /= y.shape[d];
    }
    const char *from = in + offset * es;
    char *to = out + r * width * es;
    if (step == 1)
      std::memcpy(to, from, width * es);
    else if (es == 2)
      gatherRow<2>(from, step, width, to);
    else if (es == 4)
      gatherRow<4>(from, step, width, to);
    else if (es == 8)
      gatherRow<8>(from, step, width, to);
    else
      for (int64_t j = 0; j < width; ++j)
        std::memcpy(to + j * es, from + j * step * es, es);
  }
}

void concat(KernelContext &c) {
  const TensorRef &y = c.out[0];
  int64_t axis = axisOf(attrInt(c, "axis", 0), y.rank());
  size_t es = dtypeSize(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= y.shape[d];
  for (int64_t d = axis + 1; d < y.rank(); ++d)
    inner *= y.shape[d];
  char *out = static_cast<char *>(y.data);
  for (int64_t o = 0; o < outer; ++o)
    for (const TensorRef &x : c.in) {
      size_t chunk = x.shape[axis] * inner * es;
      std::memcpy(out, static_cast<const char *>(x.data) + o * chunk, chunk);
      out += chunk;
    }
}

void slice(KernelContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  size_t es = dtypeSize(x.dtype), row = (y.rank() ? y.shape.back() : 1) * es;
  forEachSliceRow(x.shape, y.shape, sliceBegin(c, x.shape), [&](int64_t r, int64_t offset) {
    std::memcpy(static_cast<char *>(y.data) + r * row,
                static_cast<const char *>(x.data) + offset * es, row);
  });
}

void sliceBackward(KernelContext &c) {
  const TensorRef &dy = c.in[0], &dx = c.out[0];
  std::memset(dx.data, 0, dx.bytes());
  size_t es = dtypeSize(dx.dtype), row = (dy.rank() ? dy.shape.back() : 1) * es;
  forEachSliceRow(dx.shape, dy.shape, sliceBegin(c, dx.shape), [&](int64_t r, int64_t offset) {
    std::memcpy(static_cast<char *>(dx.data) + offset * es,
                static_cast<const char *>(dy.data) + r * row, row);
  });
}

void embedding(KernelContext &c) {
  const TensorRef &ids = c.in[0], &w = c.in[1], &y = c.out[0];
  int64_t vocab = w.dim(0), rowBytes = w.dim(1) * dtypeSize(w.dtype);
  for (int64_t i = 0; i < ids.size(); ++i) {
    int64_t id = ids.dtype == DType::I64 ? ids.as<int64_t>()[i] : ids.as<int32_t>()[i];
    if (id < 0 || id >= vocab)
      c.fail("id " + std::to_string(id) + " is out of range [0, " + std::to_string(vocab) + ")");
    std::memcpy(static_cast<char *>(y.data) + i * rowBytes,
                static_cast<const char *>(w.data) + id * rowBytes, rowBytes);
  }
}

void embeddingBackward(KernelContext &c) {
  const TensorRef &ids = c.in[0];
  int64_t vocab = c.out[0].dim(0), dim = c.out[0].dim(1);
  F32In dy(c.in[1]);
  std::vector<float> acc(c.out[0].size(), 0.0f);
  for (int64_t i = 0; i < ids.size(); ++i) {
    int64_t id = ids.dtype == DType::I64 ? ids.as<int64_t>()[i] : ids.as<int32_t>()[i];
    if (id < 0 || id >= vocab)
      c.fail("id " + std::to_string(id) + " is out of range [0, " + std::to_string(vocab) + ")");
    for (int64_t k = 0; k < dim; ++k)
      acc[id * dim + k] += dy[i * dim + k];
  }
  fromF32(acc.data(), c.out[0].data, c.out[0].dtype, acc.size());
}

} // namespace

void addMovementKernels(KernelTable &t) {
  t[Kernel::Reshape] = copy;
  t[Kernel::Flatten] = copy;
  t[Kernel::Identity] = copy;
  t[Kernel::Transpose] = transpose;
  t[Kernel::Concat] = concat;
  t[Kernel::Slice] = slice;
  t[Kernel::Embedding] = embedding;

  t[Kernel::SliceBackward] = sliceBackward;
  t[Kernel::EmbeddingBackward] = embeddingBackward;
}

} // namespace ampc::rt
