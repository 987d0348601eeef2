// The numerics probes (runtime/core/Probes.h) on the device: a flag set by
// any thread that sees a non-finite element, and ranges reduced per block
// into scratch, then by one block into the row. Extremes and counts are
// exact in any order, so the rows are the CPU's bits.
#include "runtime/core/Probes.h"
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

__global__ void nonFiniteKernel(View x, uint8_t *flag) {
  bool bad = false;
  AMPC_GRID_STRIDE(i, x.size) { bad |= !isfinite(load(x.data, x.dtype, i)); }
  if (bad)
    *flag = 1;
}

void recordNonFinite(LaunchContext &c) {
  uint8_t *flag = c.in.back().as<uint8_t>() + c.attrs.getInt("slot", 0);
  AMPC_CUDA_CHECK(cudaMemsetAsync(flag, 0, 1, c.stream()));
  for (size_t i = 0; i + 1 < c.in.size(); ++i)
    if (isFloat(c.in[i].dtype) && c.in[i].size() > 0) {
      nonFiniteKernel<<<blocksFor(c.in[i].size()), kThreads, 0, c.stream()>>>(viewOf(c.in[i]),
                                                                             flag);
      launched(c);
    }
}

/// One block's (or all blocks') part of a ranges row.
struct Partial {
  double maxAbs, maxFinite, minNonzero, under, near, sub;
};

__device__ Partial combine(Partial a, Partial b) {
  double minNonzero = a.minNonzero == 0 ? b.minNonzero
                      : b.minNonzero == 0 ? a.minNonzero
                                          : fmin(a.minNonzero, b.minNonzero);
  return {fmax(a.maxAbs, b.maxAbs), fmax(a.maxFinite, b.maxFinite), minNonzero, a.under + b.under,
          a.near + b.near, a.sub + b.sub};
}

__device__ Partial blockCombine(Partial p) {
  __shared__ Partial parts[kThreads];
  parts[threadIdx.x] = p;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      parts[threadIdx.x] = combine(parts[threadIdx.x], parts[threadIdx.x + half]);
    __syncthreads();
  }
  return parts[0];
}

/// One magnitude as a Partial (NaN: none).
__device__ Partial partialOf(double a, double underflow, double overflow, double subnormal) {
  if (isnan(a))
    return {0, 0, 0, 0, 0, 0};
  return {a, isinf(a) ? 0 : a, a > 0 ? a : 0, a > 0 && a < underflow ? 1.0 : 0.0,
          a > overflow ? 1.0 : 0.0, a > 0 && a < subnormal ? 1.0 : 0.0};
}

/// `fp8Scale` (an FP8 operand's probe): x * scale, the f32 product its
/// quantize rounds, is what the row describes.
__global__ void rangeKernel(View x, double underflow, double overflow, double subnormal,
                            View fp8Scale, Partial *partials) {
  Partial p{0, 0, 0, 0, 0, 0};
  float s = fp8Scale.data ? load(fp8Scale.data, fp8Scale.dtype, 0) : 1.0f;
  AMPC_GRID_STRIDE(i, x.size) {
    p = combine(p, partialOf(fabs((double)(load(x.data, x.dtype, i) * s)), underflow, overflow,
                             subnormal));
  }
  Partial block = blockCombine(p);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = block;
}

/// An attention's scores q_i . k_j * scale, one thread each (causal: the
/// masked ones skipped), reduced as rangeKernel's magnitudes.
struct Scores {
  int64_t batch, sq, sk, heads, d;
  float scale;
  bool causal;
};

__global__ void scoresRangeKernel(View q, View k, Scores m, double underflow, double overflow,
                                  double subnormal, Partial *partials) {
  Partial p{0, 0, 0, 0, 0, 0};
  AMPC_GRID_STRIDE(e, m.batch * m.heads * m.sq * m.sk) {
    int64_t j = e % m.sk, i = e / m.sk % m.sq, h = e / m.sk / m.sq % m.heads,
            b = e / m.sk / m.sq / m.heads;
    if (m.causal && j > i)
      continue;
    int64_t qi = ((b * m.sq + i) * m.heads + h) * m.d, kj = ((b * m.sk + j) * m.heads + h) * m.d;
    float dot = 0;
    for (int64_t x = 0; x < m.d; ++x)
      dot += load(q.data, q.dtype, qi + x) * load(k.data, k.dtype, kj + x);
    p = combine(p, partialOf(fabs((double)(dot * m.scale)), underflow, overflow, subnormal));
  }
  Partial block = blockCombine(p);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = block;
}

__global__ void rangeRowKernel(const Partial *partials, int blocks, double elements, View scale,
                               double *row) {
  Partial p{0, 0, 0, 0, 0, 0};
  for (int b = threadIdx.x; b < blocks; b += blockDim.x)
    p = combine(p, partials[b]);
  Partial all = blockCombine(p);
  if (threadIdx.x != 0)
    return;
  double s = scale.data ? (double)load(scale.data, scale.dtype, 0) : 1.0;
  row[kMaxAbs] = fmax(row[kMaxAbs], all.maxAbs);
  if (all.minNonzero > 0 && (row[kMinNonzeroAbs] == 0 || all.minNonzero < row[kMinNonzeroAbs]))
    row[kMinNonzeroAbs] = all.minNonzero;
  row[kElements] += elements;
  row[kUnderflows] += all.under;
  row[kNearOverflows] += all.near;
  row[kSubnormals] += all.sub;
  row[kMaxAbsUnscaled] = fmax(row[kMaxAbsUnscaled], all.maxFinite / s);
}

const View kNoView{nullptr, DType::F32, 0, 0, {}};

double *rangeRow(LaunchContext &c, int ranges) {
  return c.in[ranges].as<double>() + c.attrs.getInt("slot", 0) * kRangeFields;
}

void recordRange(LaunchContext &c) {
  const TensorRef &x = c.in[0];
  unsigned blocks = std::min<unsigned>(blocksFor(x.size()), 1024);
  auto *partials = reinterpret_cast<Partial *>(c.device.scratch(blocks * sizeof(Partial)));
  View fp8Scale = c.attrs.getBool("fp8_scaled", false) ? viewOf(c.in[2]) : kNoView;
  rangeKernel<<<blocks, kThreads, 0, c.stream()>>>(viewOf(x), c.attrs.getF64("underflow", 0),
                                                    c.attrs.getF64("overflow", 0),
                                                    c.attrs.getF64("subnormal", 0), fp8Scale,
                                                    partials);
  launched(c);
  rangeRowKernel<<<1, kThreads, 0, c.stream()>>>(
      partials, (int)blocks, (double)x.size(), c.in.size() > 2 ? viewOf(c.in[2]) : kNoView,
      rangeRow(c, 1));
  launched(c);
}

void recordScoresRange(LaunchContext &c) {
  const std::vector<int64_t> &qs = c.in[0].shape;
  Scores m{qs[0], qs[1], c.in[1].shape[1], qs[2], qs[3], 0, c.attrs.getBool("causal", false)};
  m.scale = float(c.attrs.getF64("scale", 1.0 / std::sqrt(double(m.d))));
  int64_t scores = m.batch * m.heads * m.sq * m.sk;
  double kept = 0; // the scores the mask keeps
  for (int64_t i = 0; i < m.sq; ++i)
    kept += double(m.causal ? std::min(i + 1, m.sk) : m.sk);
  kept *= double(m.batch * m.heads);
  unsigned blocks = std::min<unsigned>(blocksFor(scores), 1024);
  auto *partials = reinterpret_cast<Partial *>(c.device.scratch(blocks * sizeof(Partial)));
  scoresRangeKernel<<<blocks, kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), m, c.attrs.getF64("underflow", 0),
      c.attrs.getF64("overflow", 0), c.attrs.getF64("subnormal", 0), partials);
  launched(c);
  rangeRowKernel<<<1, kThreads, 0, c.stream()>>>(partials, (int)blocks, kept, kNoView,
                                                 rangeRow(c, 2));
  launched(c);
}

} // namespace

void addProbeKernels(KernelTable &t) {
  t[Kernel::RecordNonFinite] = recordNonFinite;
  t[Kernel::RecordRange] = recordRange;
  t[Kernel::RecordScoresRange] = recordScoresRange;
}

} // namespace ampc::rt::cuda
