// Data movement on raw elements, for any dtype: copies (reshape, flatten,
// identity), transpose, concat, slice and its backward, the embedding
// gather, and its backward as a deterministic scatter-add: ids are sorted
// stably (CUB), and each table element sums its rows in the order of the
// ids, in f32, as the CPU does.
#include <cub/device/device_radix_sort.cuh>

#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

void copy(LaunchContext &c) {
  if (c.in[0].data != c.out[0].data)
    AMPC_CUDA_CHECK(cudaMemcpyAsync(c.out[0].data, c.in[0].data, c.out[0].bytes(),
                                    cudaMemcpyDeviceToDevice, c.stream()));
}

/// Copies element `from` of x to element i of y, `bytes` per element.
__device__ void moveElement(const std::byte *x, std::byte *y, int64_t from, int64_t i, int bytes) {
  for (int b = 0; b < bytes; ++b)
    y[i * bytes + b] = x[from * bytes + b];
}

struct Gather {
  int rank, bytes;
  int64_t shape[kMaxRank];  // of the result
  int64_t stride[kMaxRank]; // of the source, per result dimension
  int64_t offset;           // of the source's first element read
  __device__ int64_t source(int64_t i) const {
    int64_t at = offset;
    for (int d = rank - 1; d >= 0; --d) {
      at += (i % shape[d]) * stride[d];
      i /= shape[d];
    }
    return at;
  }
};

__global__ void gatherKernel(const std::byte *x, std::byte *y, int64_t n, Gather g) {
  AMPC_GRID_STRIDE(i, n) { moveElement(x, y, g.source(i), i, g.bytes); }
}

template <typename Word> __global__ void gatherWords(const Word *x, Word *y, int64_t n, Gather g) {
  AMPC_GRID_STRIDE(i, n) { y[i] = x[g.source(i)]; }
}

/// The same gather moving up to 16 bytes at once where the source's last
/// dimension is contiguous: w elements form one word when every run the
/// gather reads starts at a multiple of w and both addresses (`addresses`:
/// their bits or'ed) are aligned to the word.
Gather widened(Gather g, uintptr_t addresses) {
  int last = g.rank - 1;
  if (g.rank == 0 || g.stride[last] != 1)
    return g;
  int64_t w = 1;
  for (int64_t n = 2; g.bytes * n <= 16; n *= 2) {
    bool fits = g.shape[last] % n == 0 && g.offset % n == 0 && addresses % (g.bytes * n) == 0;
    for (int d = 0; d < last; ++d)
      fits = fits && (g.shape[d] == 1 || g.stride[d] % n == 0);
    if (!fits)
      break;
    w = n;
  }
  g.shape[last] /= w;
  for (int d = 0; d < last; ++d)
    g.stride[d] = g.shape[d] == 1 ? 0 : g.stride[d] / w;
  g.offset /= w;
  g.bytes *= (int)w;
  return g;
}

/// Element i of y (n elements) from element g.source(i) of x, in the
/// widest words the gather allows.
void gather(LaunchContext &c, const std::byte *x, std::byte *y, int64_t n, Gather g) {
  Gather wide = widened(g, reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y));
  int64_t words = n / (wide.bytes / g.bytes);
  unsigned blocks = blocksFor(words);
  cudaStream_t s = c.stream();
  auto move = [&](auto word) {
    using Word = decltype(word);
    gatherWords<<<blocks, kThreads, 0, s>>>((const Word *)x, (Word *)y, words, wide);
  };
  switch (wide.bytes) {
  case 2: move(uint16_t{}); break;
  case 4: move(uint32_t{}); break;
  case 8: move(uint2{}); break;
  case 16: move(uint4{}); break;
  default: gatherKernel<<<blocks, kThreads, 0, s>>>(x, y, words, wide);
  }
  launched(c);
}

std::vector<int64_t> stridesOf(const std::vector<int64_t> &shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

void transpose(LaunchContext &c) {
  const TensorRef &x = c.in[0], &y = c.out[0];
  std::vector<int64_t> perm = c.attrs.getInts("perm"), xs = stridesOf(x.shape);
  if (y.rank() > kMaxRank)
    c.fail("tensors of rank above 8 are not supported on cuda");
  Gather g{(int)y.rank(), (int)dtypeSize(x.dtype), {}, {}, 0};
  for (int d = 0; d < g.rank; ++d) {
    g.shape[d] = y.shape[d];
    g.stride[d] = xs[perm[d]];
  }
  if (y.size() == 0)
    return;
  gather(c, x.as<std::byte>(), y.as<std::byte>(), y.size(), g);
}

void concat(LaunchContext &c) {
  const TensorRef &y = c.out[0];
  int64_t axis = c.attrs.getInt("axis", 0);
  axis = axis < 0 ? axis + y.rank() : axis;
  size_t es = dtypeSize(y.dtype);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= y.shape[d];
  for (int64_t d = axis + 1; d < y.rank(); ++d)
    inner *= y.shape[d];
  size_t rowBytes = y.shape[axis] * inner * es, at = 0;
  for (const TensorRef &x : c.in) {
    size_t chunk = x.shape[axis] * inner * es;
    if (chunk && outer)
      AMPC_CUDA_CHECK(cudaMemcpy2DAsync(y.as<std::byte>() + at, rowBytes, x.data, chunk, chunk,
                                        outer, cudaMemcpyDeviceToDevice, c.stream()));
    at += chunk;
  }
}

/// Where a slice (attributes axes, starts) of `full` begins, per dimension.
std::vector<int64_t> sliceBegin(const LaunchContext &c, const std::vector<int64_t> &full) {
  std::vector<int64_t> axes = c.attrs.getInts("axes"), starts = c.attrs.getInts("starts");
  std::vector<int64_t> begin(full.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + (int64_t)full.size() : axes[i], dim = full[a];
    int64_t s = starts[i] < 0 ? starts[i] + dim : starts[i];
    begin[a] = std::min(std::max<int64_t>(s, 0), dim);
  }
  return begin;
}

/// The gather that reads the slice `part` of `full`.
Gather sliceGather(const LaunchContext &c, const TensorRef &full, const TensorRef &part) {
  std::vector<int64_t> begin = sliceBegin(c, full.shape), fs = stridesOf(full.shape);
  if (part.rank() > kMaxRank)
    c.fail("tensors of rank above 8 are not supported on cuda");
  Gather g{(int)part.rank(), (int)dtypeSize(full.dtype), {}, {}, 0};
  for (int d = 0; d < g.rank; ++d) {
    g.shape[d] = part.shape[d];
    g.stride[d] = fs[d];
    g.offset += begin[d] * fs[d];
  }
  return g;
}

void slice(LaunchContext &c) {
  if (c.out[0].size() == 0)
    return;
  Gather g = sliceGather(c, c.in[0], c.out[0]);
  gather(c, c.in[0].as<std::byte>(), c.out[0].as<std::byte>(), c.out[0].size(), g);
}

__global__ void scatterKernel(const std::byte *dy, std::byte *dx, int64_t n, Gather g) {
  AMPC_GRID_STRIDE(i, n) { moveElement(dy, dx, i, g.source(i), g.bytes); }
}

void sliceBackward(LaunchContext &c) {
  const TensorRef &dy = c.in[0], &dx = c.out[0];
  AMPC_CUDA_CHECK(cudaMemsetAsync(dx.data, 0, dx.bytes(), c.stream()));
  if (dy.size() == 0)
    return;
  Gather g = sliceGather(c, dx, dy);
  scatterKernel<<<blocksFor(dy.size()), kThreads, 0, c.stream()>>>(
      dy.as<std::byte>(), dx.as<std::byte>(), dy.size(), g);
  launched(c);
}

/// Row ids[i] of the table to row i of y, `Word`s at a time.
template <typename Word>
__global__ void embeddingKernel(View ids, const Word *table, Word *y, int64_t vocab,
                                int64_t rowWords, int32_t *error, int step) {
  AMPC_GRID_STRIDE(e, ids.size * rowWords) {
    int64_t i = e / rowWords, b = e % rowWords, id = loadIndex(ids.data, ids.dtype, i);
    if (id < 0 || id >= vocab) {
      reportError(error, step, kIndexOutOfRange);
      y[e] = Word{};
      continue;
    }
    y[e] = table[id * rowWords + b];
  }
}

void embedding(LaunchContext &c) {
  const TensorRef &ids = c.in[0], &w = c.in[1], &y = c.out[0];
  int64_t rowBytes = w.dim(1) * dtypeSize(w.dtype);
  if (ids.size() * rowBytes == 0)
    return;
  // The widest word (up to 16 bytes) that divides a row and both addresses.
  uintptr_t bits = reinterpret_cast<uintptr_t>(w.data) | reinterpret_cast<uintptr_t>(y.data) |
                   (uintptr_t)rowBytes;
  int word = 16;
  while (bits % word)
    word /= 2;
  auto move = [&](auto type) {
    using Word = decltype(type);
    int64_t rowWords = rowBytes / (int64_t)sizeof(Word);
    embeddingKernel<<<blocksFor(ids.size() * rowWords), kThreads, 0, c.stream()>>>(
        viewOf(ids), w.as<const Word>(), y.as<Word>(), w.dim(0), rowWords, c.device.errorWord(),
        c.index);
  };
  switch (word) {
  case 16: move(uint4{}); break;
  case 8: move(uint2{}); break;
  case 4: move(uint32_t{}); break;
  case 2: move(uint16_t{}); break;
  default: move(uint8_t{}); break;
  }
  launched(c);
}

__global__ void idKeys(View ids, int32_t *keys, int32_t *positions, int64_t vocab, int32_t *error,
                       int step) {
  AMPC_GRID_STRIDE(i, ids.size) {
    int64_t id = loadIndex(ids.data, ids.dtype, i);
    if (id < 0 || id >= vocab) {
      reportError(error, step, kIndexOutOfRange);
      id = vocab; // sorts last, sums nowhere
    }
    keys[i] = (int32_t)id;
    positions[i] = (int32_t)i;
  }
}

/// Element (row v, column k) of the table gradient: the rows of dy whose id
/// is v, in the order of the ids (a stable sort keeps it), summed in f32.
__global__ void sumRows(const int32_t *keys, const int32_t *positions, int64_t count, View dy,
                        View dw, int64_t dim) {
  AMPC_GRID_STRIDE(e, dw.size) {
    int64_t v = e / dim, k = e % dim, lo = 0, hi = count;
    while (lo < hi) { // the first sorted key >= v
      int64_t mid = (lo + hi) / 2;
      if (keys[mid] < v)
        lo = mid + 1;
      else
        hi = mid;
    }
    float sum = 0.0f;
    for (int64_t p = lo; p < count && keys[p] == v; ++p)
      sum += load(dy.data, dy.dtype, positions[p] * dim + k);
    store(dw.data, dw.dtype, e, sum);
  }
}

void embeddingBackward(LaunchContext &c) {
  const TensorRef &ids = c.in[0], &dy = c.in[1], &dw = c.out[0];
  int64_t n = ids.size(), vocab = dw.dim(0), dim = dw.dim(1);
  if (n >= (int64_t(1) << 31) || vocab >= (int64_t(1) << 31))
    c.fail("more than 2^31 ids or table rows are not supported on cuda");
  size_t sortBytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, sortBytes, (int32_t *)nullptr, (int32_t *)nullptr,
                                  (int32_t *)nullptr, (int32_t *)nullptr, (int)n);
  size_t lists = 4 * ((n * sizeof(int32_t) + 255) / 256 * 256);
  std::byte *scratch = c.device.scratch(lists + sortBytes);
  size_t quarter = lists / 4;
  auto *keys = reinterpret_cast<int32_t *>(scratch), *positions = keys + quarter / 4,
       *sortedKeys = positions + quarter / 4, *sortedPositions = sortedKeys + quarter / 4;
  if (n) {
    idKeys<<<blocksFor(n), kThreads, 0, c.stream()>>>(viewOf(ids), keys, positions, vocab,
                                                      c.device.errorWord(), c.index);
    cub::DeviceRadixSort::SortPairs(scratch + lists, sortBytes, keys, sortedKeys, positions,
                                    sortedPositions, (int)n, 0, 32, c.stream());
  }
  sumRows<<<blocksFor(dw.size()), kThreads, 0, c.stream()>>>(sortedKeys, sortedPositions, n,
                                                             viewOf(dy), viewOf(dw), dim);
  launched(c);
}

} // namespace

void addMovementKernels(KernelTable &t) {
  t[Kernel::Reshape] = copy;
  t[Kernel::Flatten] = copy;
  t[Kernel::Identity] = copy;
  t[Kernel::Transpose] = transpose;
  t[Kernel::Concat] = concat;
  t[Kernel::Slice] = slice;
  t[Kernel::SliceBackward] = sliceBackward;
  t[Kernel::Embedding] = embedding;
  t[Kernel::EmbeddingBackward] = embeddingBackward;
}

} // namespace ampc::rt::cuda
