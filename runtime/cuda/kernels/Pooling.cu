// max_pool2d, avg_pool2d (padding not counted), global_avg_pool, and the
// backward of max and avg pooling, NHWC or NCHW. The backward gathers, for
// each input element, the windows that cover it in the CPU's order, so the
// sums of overlapping windows are the CPU's bits. Max pooling's backward
// first finds each window's largest cell once (a byte per window), so the
// gather reads a byte per covering window instead of searching it again.
// Each element's coordinates come from its index by IntDivider's
// multiplies, not by 64-bit divisions (docs/cuda.md, "Index arithmetic").
#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/IntDivider.h"

namespace ampc::rt::cuda {
namespace {

struct Pool {
  int64_t n, c, h, w, oh, ow;      // input and output sizes
  int64_t sn, sc, sh, sw;          // input strides
  int64_t osn, osc, osh, osw;      // output strides
  int64_t kh, kw, sy, sx, pt, pl;  // window, strides, top and left padding
  bool nhwc;
  __device__ int64_t in(int64_t n_, int64_t ch, int64_t y, int64_t x) const {
    return n_ * sn + ch * sc + y * sh + x * sw;
  }
  __device__ int64_t out(int64_t n_, int64_t ch, int64_t y, int64_t x) const {
    return n_ * osn + ch * osc + y * osh + x * osw;
  }
};

/// An element's coordinates from its index in a [n, c, h, w] tensor laid
/// out NHWC or NCHW: three divisions, innermost dimension first.
template <typename I> struct Coordinates {
  num::IntDivider<I> d0, d1, d2; // NHWC: c, w, h; NCHW: w, h, c
  bool nhwc;
  Coordinates() = default;
  Coordinates(int64_t c, int64_t h, int64_t w, bool channelsLast)
      : d0(divisor(channelsLast ? c : w)), d1(divisor(channelsLast ? w : h)),
        d2(divisor(channelsLast ? h : c)), nhwc(channelsLast) {}
  static num::IntDivider<I> divisor(int64_t d) {
    return num::IntDivider<I>(I(std::max<int64_t>(d, 1)));
  }
  __device__ void operator()(int64_t e, int64_t &n, int64_t &ch, int64_t &y, int64_t &x) const {
    auto a = d0.divMod(I(e));
    auto b = d1.divMod(a.quotient);
    auto c = d2.divMod(b.quotient);
    n = c.quotient;
    if (nhwc)
      ch = a.remainder, x = b.remainder, y = c.remainder;
    else
      x = a.remainder, y = b.remainder, ch = c.remainder;
  }
};

/// The divisions a pooling kernel makes: coordinates in the input and the
/// output, and the windows' strides.
template <typename I> struct PoolIndex {
  Coordinates<I> in, out;
  num::IntDivider<I> sy, sx;
};

template <typename I> PoolIndex<I> poolIndexOf(const Pool &p) {
  return {{p.c, p.h, p.w, p.nhwc},
          {p.c, p.oh, p.ow, p.nhwc},
          Coordinates<I>::divisor(p.sy),
          Coordinates<I>::divisor(p.sx)};
}

/// f(PoolIndex<uint32_t>) where every index of x and y fits 31 bits, else
/// f(PoolIndex<uint64_t>).
template <typename F>
void withPoolIndex(const Pool &p, const TensorRef &x, const TensorRef &y, F f) {
  uint64_t limit = num::IntDivider<uint32_t>::kLimit;
  if ((uint64_t)x.size() < limit && (uint64_t)y.size() < limit)
    f(poolIndexOf<uint32_t>(p));
  else
    f(poolIndexOf<uint64_t>(p));
}

Pool poolOf(const LaunchContext &c, const TensorRef &x, const TensorRef &y) {
  bool nhwc = c.attrs.getStr("layout", "NHWC") == "NHWC";
  std::vector<int64_t> k = c.attrs.getInts("kernel", {1, 1});
  std::vector<int64_t> st = c.attrs.getInts("strides", k), pad = c.attrs.getInts("padding", {0, 0});
  Pool p;
  p.nhwc = nhwc;
  p.n = x.dim(0);
  p.c = nhwc ? x.dim(3) : x.dim(1);
  p.h = nhwc ? x.dim(1) : x.dim(2);
  p.w = nhwc ? x.dim(2) : x.dim(3);
  p.oh = nhwc ? y.dim(1) : y.dim(2);
  p.ow = nhwc ? y.dim(2) : y.dim(3);
  auto strides = [&](int64_t h, int64_t w, int64_t &sn, int64_t &sc, int64_t &sh, int64_t &sw) {
    sn = p.c * h * w;
    sc = nhwc ? 1 : h * w;
    sh = nhwc ? w * p.c : w;
    sw = nhwc ? p.c : 1;
  };
  strides(p.h, p.w, p.sn, p.sc, p.sh, p.sw);
  strides(p.oh, p.ow, p.osn, p.osc, p.osh, p.osw);
  p.kh = k[0], p.kw = k[1], p.sy = st[0], p.sx = st[1];
  p.pt = pad[0];
  p.pl = pad.size() == 4 ? pad[2] : pad[1];
  return p;
}

/// The cell (ky * kw + kx) of the first largest element of window (n, ch,
/// oy, ox), as the CPU picks it (-1 for a window with no valid cell);
/// `count` its valid cells.
__device__ int64_t windowBest(const View &x, const Pool &p, int64_t n, int64_t ch, int64_t oy,
                              int64_t ox, int64_t &count) {
  int64_t cell = -1;
  float best = -INFINITY;
  count = 0;
  for (int64_t ky = 0; ky < p.kh; ++ky)
    for (int64_t kx = 0; kx < p.kw; ++kx) {
      int64_t iy = oy * p.sy - p.pt + ky, ix = ox * p.sx - p.pl + kx;
      if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
        continue;
      ++count;
      float v = x.data ? load(x.data, x.dtype, p.in(n, ch, iy, ix)) : 0.0f;
      if (cell < 0 || v > best)
        cell = ky * p.kw + kx, best = v;
    }
  return cell;
}

/// The cell of window (oy, ox) that input (iy, ix) is.
__device__ int64_t cellOf(const Pool &p, int64_t iy, int64_t ix, int64_t oy, int64_t ox) {
  return (iy - (oy * p.sy - p.pt)) * p.kw + (ix - (ox * p.sx - p.pl));
}

/// Windows' largest cells fit a byte (kNoCell: a window with none).
constexpr int64_t kNoCell = 255;

template <bool Max, typename I>
__global__ void poolKernel(View x, View y, Pool p, PoolIndex<I> at) {
  AMPC_GRID_STRIDE(e, y.size) {
    int64_t n, ch, oy, ox;
    at.out(e, n, ch, oy, ox);
    float acc = Max ? -INFINITY : 0.0f;
    int64_t count = 0;
    for (int64_t ky = 0; ky < p.kh; ++ky)
      for (int64_t kx = 0; kx < p.kw; ++kx) {
        int64_t iy = oy * p.sy - p.pt + ky, ix = ox * p.sx - p.pl + kx;
        if (iy < 0 || iy >= p.h || ix < 0 || ix >= p.w)
          continue;
        ++count;
        float v = load(x.data, x.dtype, p.in(n, ch, iy, ix));
        acc = Max ? (v > acc || v != v ? v : acc) : acc + v;
      }
    store(y.data, y.dtype, e, Max ? acc : acc / (float)(count > 1 ? count : 1));
  }
}

template <bool Max> void pool(LaunchContext &c) {
  Pool p = poolOf(c, c.in[0], c.out[0]);
  if (c.out[0].size() == 0)
    return;
  withPoolIndex(p, c.in[0], c.out[0], [&](auto at) {
    poolKernel<Max><<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(
        viewOf(c.in[0]), viewOf(c.out[0]), p, at);
  });
  launched(c);
}

/// Max pooling's backward, first pass: each window's largest cell.
template <typename I>
__global__ void windowCells(View x, Pool p, PoolIndex<I> at, int64_t windows, uint8_t *cells) {
  AMPC_GRID_STRIDE(e, windows) {
    int64_t n, ch, oy, ox;
    at.out(e, n, ch, oy, ox);
    int64_t count, cell = windowBest(x, p, n, ch, oy, ox, count);
    cells[e] = uint8_t(cell < 0 ? kNoCell : cell);
  }
}

/// dx of each input element: the windows covering it, in (oy, ox) order.
/// Max pooling reads each window's largest cell from `cells` (windowCells)
/// where given, or searches the window.
template <bool Max, typename I>
__global__ void poolBackwardKernel(View x, View dy, View dx, Pool p, PoolIndex<I> at,
                                   const uint8_t *cells) {
  AMPC_GRID_STRIDE(e, dx.size) {
    int64_t n, ch, iy, ix;
    at.in(e, n, ch, iy, ix);
    int64_t y0 = iy + p.pt - p.kh + 1, x0 = ix + p.pl - p.kw + 1;
    y0 = y0 <= 0 ? 0 : (int64_t)at.sy.div(I(y0 + p.sy - 1));
    x0 = x0 <= 0 ? 0 : (int64_t)at.sx.div(I(x0 + p.sx - 1));
    float sum = 0.0f;
    for (int64_t oy = y0; oy < p.oh && oy * p.sy - p.pt <= iy; ++oy)
      for (int64_t ox = x0; ox < p.ow && ox * p.sx - p.pl <= ix; ++ox) {
        int64_t out = p.out(n, ch, oy, ox), count = 0, cell;
        if (Max && cells)
          cell = cells[out];
        else
          cell = windowBest(x, p, n, ch, oy, ox, count);
        float g = load(dy.data, dy.dtype, out);
        if (Max && cell == cellOf(p, iy, ix, oy, ox))
          sum += g;
        else if (!Max)
          sum += g / float(count);
      }
    store(dx.data, dx.dtype, e, sum);
  }
}

template <bool Max> void poolBackward(LaunchContext &c) {
  const TensorRef &dy = Max ? c.in[1] : c.in[0], &dx = c.out[0];
  Pool p = poolOf(c, dx, dy);
  if (dx.size() == 0)
    return;
  View x = Max ? viewOf(c.in[0]) : View{nullptr, DType::F32, 0, 0, {}};
  uint8_t *cells = nullptr;
  if (Max && p.kh * p.kw <= kNoCell)
    cells = reinterpret_cast<uint8_t *>(c.device.scratch(dy.size()));
  withPoolIndex(p, dx, dy, [&](auto at) {
    if (cells)
      windowCells<<<blocksFor(dy.size()), kThreads, 0, c.stream()>>>(x, p, at, dy.size(), cells);
    poolBackwardKernel<Max><<<blocksFor(dx.size()), kThreads, 0, c.stream()>>>(
        x, viewOf(dy), viewOf(dx), p, at, cells);
  });
  launched(c);
}

__global__ void globalAvgPoolKernel(View x, View y, Pool p) {
  AMPC_GRID_STRIDE(e, y.size) {
    int64_t n = e / p.c, ch = e % p.c;
    double sum = 0;
    for (int64_t iy = 0; iy < p.h; ++iy)
      for (int64_t ix = 0; ix < p.w; ++ix)
        sum += load(x.data, x.dtype, p.in(n, ch, iy, ix));
    store(y.data, y.dtype, e, float(sum / double(p.h * p.w)));
  }
}

void globalAvgPool(LaunchContext &c) {
  Pool p = poolOf(c, c.in[0], c.in[0]);
  if (c.out[0].size() == 0)
    return;
  globalAvgPoolKernel<<<blocksFor(c.out[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.out[0]), p);
  launched(c);
}

} // namespace

void addPoolingKernels(KernelTable &t) {
  t[Kernel::MaxPool2d] = pool<true>;
  t[Kernel::AvgPool2d] = pool<false>;
  t[Kernel::GlobalAvgPool] = globalAvgPool;
  t[Kernel::MaxPool2dBackward] = poolBackward<true>;
  t[Kernel::AvgPool2dBackward] = poolBackward<false>;
}

} // namespace ampc::rt::cuda
