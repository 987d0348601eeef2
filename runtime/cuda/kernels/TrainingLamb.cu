// LAMB (docs/training.md, "Optimizers"), one param at a time in three
// launches that read found_inf, lr and the step count on the device: the
// moments and a block's sums of p^2 and u^2 per chunk; one block adding the
// chunks' sums in a fixed order into the trust ratio; the step. The math is
// runtime/numerics' LambUpdate, as on the CPU; the norms are summed in
// another order than the CPU's, so the update agrees within the
// Accumulated tolerance (runtime/core/KernelTraits.h), and run to run it
// gives the same bits (no atomics).
#include "runtime/cuda/kernels/Rows.h"
#include "runtime/cuda/kernels/Updates.h"

namespace ampc::rt::cuda {
namespace {

constexpr int64_t kChunk = 4096;
constexpr int kWarps = kThreads / rows::kWarp;

/// The sums of `a` and `b` over the block: each warp's by a fixed tree,
/// then the warps' in order by thread 0 (the only thread the totals reach).
/// Every thread of the block calls it.
__device__ void blockSums(double &a, double &b) {
  __shared__ double sums[2][kWarps];
  a = rows::warpSum(a);
  b = rows::warpSum(b);
  if (rows::lane() == 0) {
    sums[0][threadIdx.x / rows::kWarp] = a;
    sums[1][threadIdx.x / rows::kWarp] = b;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    a = b = 0;
    for (int w = 0; w < kWarps; ++w)
      a += sums[0][w], b += sums[1][w];
  }
  __syncthreads(); // the next call may write sums again
}

__device__ num::LambUpdate lambUpdate(const UpdateScalars &s, const UpdateSettings &cfg, View step,
                                      bool adapt) {
  return num::LambUpdate::at(load(s.lr.data, s.lr.dtype, 0), cfg.beta1, cfg.beta2, cfg.epsilon,
                             cfg.weightDecay, load(step.data, step.dtype, 0), adapt);
}

/// A block a chunk: m, v and the direction u of each element, and the
/// chunk's sums of p^2 and u^2 into sums[2 * chunk], sums[2 * chunk + 1].
__global__ void lambMomentsKernel(View p, View g, UpdateScalars s, float *m, float *v, View step,
                                  UpdateSettings cfg, bool adapt, double *sums, int64_t chunks) {
  if (*s.found)
    return;
  num::LambUpdate update = lambUpdate(s, cfg, step, adapt);
  float inverse = inverseScale(s);
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    int64_t begin = chunk * kChunk, end = min(begin + kChunk, p.size);
    double pp = 0, uu = 0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      float param = load(p.data, p.dtype, i);
      float u = update.moments(param, gradientAt(g.data, g.dtype, s, inverse, i), m[i], v[i]);
      pp += double(param) * param;
      uu += double(u) * u;
    }
    blockSums(pp, uu);
    if (threadIdx.x == 0) {
      sums[2 * chunk] = pp;
      sums[2 * chunk + 1] = uu;
    }
  }
}

/// One block: the chunks' sums, each thread's in its fixed chunks' order,
/// then the block's; the trust ratio into *ratio.
__global__ void lambRatioKernel(const double *sums, int64_t chunks, UpdateScalars s,
                                UpdateSettings cfg, View step, bool adapt, double *ratio) {
  if (*s.found)
    return;
  double pp = 0, uu = 0;
  for (int64_t chunk = threadIdx.x; chunk < chunks; chunk += blockDim.x)
    pp += sums[2 * chunk], uu += sums[2 * chunk + 1];
  blockSums(pp, uu);
  if (threadIdx.x == 0)
    *ratio = lambUpdate(s, cfg, step, adapt).trustRatio(pp, uu);
}

__global__ void lambApplyKernel(View p, View copy, UpdateScalars s, const float *m, const float *v,
                                View step, UpdateSettings cfg, bool adapt, const double *ratio) {
  if (*s.found)
    return;
  num::LambUpdate update = lambUpdate(s, cfg, step, adapt);
  double r = *ratio;
  AMPC_GRID_STRIDE(i, p.size) {
    float param = load(p.data, p.dtype, i);
    update.apply(param, m[i], v[i], r);
    storeUpdated(p, copy, i, param);
  }
}

void lamb(LaunchContext &c) {
  using U = UpdateOperands;
  UpdateOperands u = operandsOf(c);
  UpdateScalars s = scalarsOf(c);
  UpdateSettings cfg = settingsOf(c);
  bool adapt = updateConfigOf(c.step, c.attrs).adapt;
  View p = viewOf(c.in[U::param]), step = viewOf(c.in[u.stepCount]);
  float *m = c.in[U::firstMoment].as<float>(), *v = c.in[U::firstMoment + 1].as<float>();
  int64_t chunks = std::max<int64_t>((p.size + kChunk - 1) / kChunk, 1);
  auto *sums = reinterpret_cast<double *>(c.device.scratch((2 * chunks + 1) * sizeof(double)));
  double *ratio = sums + 2 * chunks;
  lambMomentsKernel<<<(unsigned)std::min<int64_t>(chunks, 65535), kThreads, 0, c.stream()>>>(
      p, viewOf(c.in[U::grad]), s, m, v, step, cfg, adapt, sums, p.size > 0 ? chunks : 0);
  lambRatioKernel<<<1, kThreads, 0, c.stream()>>>(sums, p.size > 0 ? chunks : 0, s, cfg, step,
                                                  adapt, ratio);
  lambApplyKernel<<<blocksFor(p.size), kThreads, 0, c.stream()>>>(p, copyView(c), s, m, v, step,
                                                                 cfg, adapt, ratio);
  launched(c);
}

} // namespace

void addLambKernels(KernelTable &t) { t[Kernel::Lamb] = lamb; }

} // namespace ampc::rt::cuda
