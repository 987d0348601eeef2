// softmax and log_softmax over any axis, and their backward. Along the
// last axis (attention's rows), one warp per row (runtime/cuda/kernels/Rows.h): the
// row read once where it fits, the CPU's vectorised exponential (vectorExp),
// its sum in double across the warp. Along another axis, one thread per row
// summing in double in the CPU's order. Operands and results in any float
// mix (cast folding); softmax's rounded copy (kRoundedCopy) is stored in the
// same pass. A folded scale (docs/runtime.md, "Softmax scales") applies to
// each element as it is read (softmax) or before it is stored (backward), as
// the scale step did. The backward may take the softmax's operand instead
// of its result (from_logits) and recompute each probability as the softmax
// computed it. Results agree with the CPU within a rounding of the sum.
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/kernels/Rows.h"
#include "runtime/numerics/Activations.h"
#include "runtime/numerics/Exp.h"

namespace ampc::rt::cuda {
namespace {

/// A scale step folded in: num::Scale and the rounding to its result's
/// dtype, before a softmax reads an element or after its backward computes
/// one (the result's own dtype rounds last, as it is stored).
struct Scaled {
  bool on;
  float scale, bias;
  DType round;
  __device__ float before(float v) const {
    return on ? roundThrough(num::Scale{scale, bias}.value(v), round) : v;
  }
  __device__ float after(float v) const {
    return on ? num::Scale{scale, bias}.value(roundThrough(v, round)) : v;
  }
};

Scaled scaledOf(const LaunchContext &c, const std::string &prefix) {
  FoldedScale f = c.attrs.foldedScale(prefix);
  return {f.present, f.scale, f.bias, f.round};
}

struct Rows {
  int64_t outer, dim, inner;
};

Rows rowsOf(const LaunchContext &c, const TensorRef &t) {
  int64_t axis = c.attrs.getInt("axis", -1);
  axis = axis < 0 ? axis + t.rank() : axis;
  Rows r{1, t.shape[axis], 1};
  for (int64_t d = axis + 1; d < t.rank(); ++d)
    r.inner *= t.shape[d];
  r.outer = r.dim * r.inner != 0 ? t.size() / (r.dim * r.inner) : 0;
  return r;
}

/// A row's softmax along the last axis, by its warp: the max and the sum of
/// exponentials; probability(raw) is element raw's softmax. The forward and
/// the backward that recomputes it from the logits share it: the same bits.
struct RowSoftmax {
  Scaled pre{};
  float max = 0;
  double sum = 0;
  float inverse = 0;
  RowSoftmax() = default;
  template <int PerLane>
  __device__ RowSoftmax(const rows::RowShare<PerLane> &xs, const Scaled &scaled) : pre(scaled) {
    max = -INFINITY;
    xs.each([&](int, int64_t, float raw) {
      float v = pre.before(raw);
      max = v > max ? v : max;
    });
    max = rows::warpMax(max);
    sum = 0;
    xs.each([&](int, int64_t, float raw) { sum += num::vectorExp(pre.before(raw) - max); });
    sum = rows::warpSum(sum);
    inverse = float(1.0 / sum);
  }
  __device__ float probability(float raw) const {
    return num::vectorExp(pre.before(raw) - max) * inverse;
  }
};

/// Along the last axis: a warp per row of r.dim elements.
template <bool Log, int PerLane>
__global__ void softmaxLastAxis(View x, ResultAndCopy y, Rows r, Scaled pre) {
  AMPC_ROW_STRIDE(row, r.outer) {
    rows::RowShare<PerLane> xs(x, row * r.dim, r.dim);
    RowSoftmax sm(xs, pre);
    double logSum = log(sm.sum);
    xs.each([&](int, int64_t k, float raw) {
      y.store(row * r.dim + k, Log ? float(double(pre.before(raw) - sm.max) - logSum)
                                   : sm.probability(raw));
    });
  }
}

/// Along another axis: a thread per row, r.inner apart.
template <bool Log>
__global__ void softmaxStrided(View x, ResultAndCopy y, Rows r, Scaled pre) {
  AMPC_GRID_STRIDE(row, r.outer * r.inner) {
    int64_t base = (row / r.inner) * r.dim * r.inner + row % r.inner;
    auto at = [&](int64_t k) { return pre.before(load(x.data, x.dtype, base + k * r.inner)); };
    float max = -INFINITY;
    for (int64_t k = 0; k < r.dim; ++k) {
      float v = at(k);
      max = v > max ? v : max;
    }
    double sum = 0;
    for (int64_t k = 0; k < r.dim; ++k)
      sum += exp(double(at(k) - max));
    double logSum = log(sum);
    for (int64_t k = 0; k < r.dim; ++k) {
      double shifted = at(k) - max;
      y.store(base + k * r.inner, float(Log ? shifted - logSum : exp(shifted - logSum)));
    }
  }
}

template <bool Log> void softmax(LaunchContext &c) {
  Rows r = rowsOf(c, c.in[0]);
  if (r.outer * r.inner == 0)
    return;
  View x = viewOf(c.in[0]);
  ResultAndCopy y = resultAndCopy(c, 1);
  Scaled pre = scaledOf(c, "input");
  if (r.inner > 1)
    softmaxStrided<Log><<<blocksFor(r.outer * r.inner), kThreads, 0, c.stream()>>>(x, y, r, pre);
  else
    rows::withPerLane(r.dim, [&](auto perLane) {
      softmaxLastAxis<Log, perLane.value>
          <<<rows::blocksForRows(r.outer), kThreads, 0, c.stream()>>>(x, y, r, pre);
    });
  launched(c);
}

/// Along the last axis: a warp per row. With `logits` (from_logits), y is
/// the softmax's operand and each probability is recomputed from it as the
/// softmax computed it (RowSoftmax).
template <int PerLane>
__global__ void softmaxBackwardLastAxis(View y, View dy, View dx, Rows r, bool log, Scaled post,
                                        bool logits, Scaled pre) {
  AMPC_ROW_STRIDE(row, r.outer) {
    rows::RowShare<PerLane> ys(y, row * r.dim, r.dim), gs(dy, row * r.dim, r.dim);
    RowSoftmax sm = logits ? RowSoftmax(ys, pre) : RowSoftmax{};
    auto value = [&](float v) { return logits ? sm.probability(v) : v; };
    double dot = 0;
    ys.each([&](int j, int64_t k, float v) {
      float gk = gs.at(j, k);
      dot += log ? gk : double(gk) * value(v);
    });
    dot = rows::warpSum(dot);
    ys.each([&](int j, int64_t k, float raw) {
      float gk = gs.at(j, k), v = value(raw);
      store(dx.data, dx.dtype, row * r.dim + k,
            post.after(log ? float(gk - ::exp(double(v)) * dot) : float(v * (gk - dot))));
    });
  }
}

/// Along another axis: a thread per row.
__global__ void softmaxBackwardStrided(View y, View dy, View dx, Rows r, bool log, Scaled post) {
  AMPC_GRID_STRIDE(row, r.outer * r.inner) {
    int64_t base = (row / r.inner) * r.dim * r.inner + row % r.inner;
    double dot = 0;
    for (int64_t k = 0; k < r.dim; ++k) {
      int64_t at = base + k * r.inner;
      float g = load(dy.data, dy.dtype, at);
      dot += log ? g : double(g) * load(y.data, y.dtype, at);
    }
    for (int64_t k = 0; k < r.dim; ++k) {
      int64_t at = base + k * r.inner;
      float g = load(dy.data, dy.dtype, at), v = load(y.data, y.dtype, at);
      store(dx.data, dx.dtype, at,
            post.after(log ? float(g - ::exp(double(v)) * dot) : float(v * (g - dot))));
    }
  }
}

/// softmax_backward, and with `Logits` softmax_logits_backward.
template <bool Logits> void softmaxBackward(LaunchContext &c) {
  Rows r = rowsOf(c, c.in[0]);
  if (r.outer * r.inner == 0)
    return;
  View y = viewOf(c.in[0]), dy = viewOf(c.in[1]), dx = viewOf(c.out[0]);
  bool log = c.attrs.getBool("log", false), logits = Logits;
  Scaled post = scaledOf(c, "output"), pre = scaledOf(c, "input");
  if (r.inner > 1) // from logits is along the last axis only (its signature)
    softmaxBackwardStrided<<<blocksFor(r.outer * r.inner), kThreads, 0, c.stream()>>>(
        y, dy, dx, r, log, post);
  else
    rows::withPerLane(r.dim, [&](auto perLane) {
      softmaxBackwardLastAxis<perLane.value>
          <<<rows::blocksForRows(r.outer), kThreads, 0, c.stream()>>>(y, dy, dx, r, log, post,
                                                                      logits, pre);
    });
  launched(c);
}

} // namespace

void addSoftmaxKernels(KernelTable &t) {
  t[Kernel::Softmax] = softmax<false>;
  t[Kernel::LogSoftmax] = softmax<true>;
  t[Kernel::SoftmaxBackward] = softmaxBackward<false>;
  t[Kernel::SoftmaxLogitsBackward] = softmaxBackward<true>;
}

} // namespace ampc::rt::cuda
