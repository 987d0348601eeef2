// Training kernels, all on the device, with no host synchronisation: the
// finite check (and unscale) over the whole gradient list in one launch, the
// loss-scaling rule, the optimizer updates (which read lr, the scale and
// found_inf from device memory and do nothing when found_inf is set), and
// the state updates. The math is runtime/numerics', as on the CPU.
#include <numeric>
#include <vector>

#include "runtime/core/Convert.h"
#include "runtime/core/History.h"
#include "runtime/cuda/kernels/Quads.h"
#include "runtime/cuda/kernels/Updates.h"
#include "runtime/numerics/Finite.h"
#include "runtime/numerics/Fp8Scaling.h"
#include "runtime/numerics/LossScale.h"
#include "runtime/numerics/Optimizers.h"

namespace ampc::rt::cuda {
namespace {

/// One tensor of a list, for multi-tensor kernels.
struct ListEntry {
  const void *grad;
  void *out; // the unscaled gradient (f32), or null for the check alone
  DType dtype;
  int64_t size, firstChunk;
  bool quads; // read (and unscaled) four elements a load (Quads.h)
};

constexpr int64_t kChunk = 4096;

/// A gradient list in device memory, written once when the step is prepared.
struct DeviceList {
  const ListEntry *entries = nullptr;
  int count = 0;
  int64_t chunks = 0;
};

/// The list of the step's inputs `inputs` (and their outputs, unscaling),
/// uploaded to `table` at its first run and kept there.
DeviceList listOf(LaunchContext &c, const std::vector<int> &inputs, bool unscale,
                  DeviceMemory &table) {
  std::vector<ListEntry> entries;
  int64_t chunks = 0;
  for (int i : inputs) {
    const TensorRef &g = c.in[i];
    void *out = unscale ? c.out[i].data : nullptr;
    bool quads = quadAligned(g.data, g.dtype) && (!out || quadAligned(out, DType::F32));
    entries.push_back({g.data, out, g.dtype, g.size(), chunks, quads});
    chunks += (g.size() + kChunk - 1) / kChunk;
  }
  return {uploadOnce(c, table, entries), (int)entries.size(), chunks};
}

/// Each block takes one chunk of one tensor; any non-finite element sets
/// the flag (a byte every writer sets to 1).
__global__ void checkKernel(DeviceList list, const void *scale, DType scaleType, uint8_t *found) {
  float inverse = scale ? 1.0f / load(scale, scaleType, 0) : 1.0f;
  for (int64_t chunk = blockIdx.x; chunk < list.chunks; chunk += gridDim.x) {
    const ListEntry &e = entryOfChunk(list.entries, list.count, chunk);
    int64_t begin = (chunk - e.firstChunk) * kChunk, end = min(begin + kChunk, e.size);
    bool bad = false;
    quadStride(
        begin, end, threadIdx.x, blockDim.x, e.quads,
        [&](auto w, int64_t i) { return loadFloats<decltype(w)::value>(e.grad, e.dtype, i); },
        [&](auto w, int64_t i, auto g) {
          constexpr int W = decltype(w)::value;
#pragma unroll
          for (int k = 0; k < W; ++k)
            bad |= num::isNonFiniteF32(g.v[k]);
          if (!e.out)
            return;
#pragma unroll
          for (int k = 0; k < W; ++k)
            g.v[k] *= inverse;
          storeUnit<W>(e.out, DType::F32, i, g.v);
        });
    if (bad)
      *found = 1;
  }
}

/// Checks (and unscales) the listed gradients on `stream`, setting `found`
/// where one is not finite; `first` clears it before.
void checkList(LaunchContext &c, const DeviceList &list, const TensorRef *scale, uint8_t *found,
               bool first, cudaStream_t stream) {
  if (first)
    AMPC_CUDA_CHECK(cudaMemsetAsync(found, 0, 1, stream));
  if (list.chunks == 0)
    return;
  checkKernel<<<(unsigned)std::min<int64_t>(list.chunks, 65535), kThreads, 0, stream>>>(
      list, scale ? scale->data : nullptr, scale ? scale->dtype : DType::F32, found);
  launched(c);
}

void checkFinite(LaunchContext &c, bool unscale) {
  size_t n = unscale ? c.out.size() - 1 : c.in.size();
  std::vector<int> all(n);
  std::iota(all.begin(), all.end(), 0);
  DeviceList list = listOf(c, all, unscale, c.state);
  checkList(c, list, unscale ? &c.in[n] : nullptr, c.out.back().as<uint8_t>(), true, c.stream());
}

/// The sum of `v` over the block's kThreads threads, by a fixed tree: the
/// same bits every run. Every thread of the block calls it.
__device__ double blockSum(double v) {
  __shared__ double sums[kThreads];
  sums[threadIdx.x] = v;
  __syncthreads();
  for (int half = kThreads / 2; half > 0; half /= 2) {
    if ((int)threadIdx.x < half)
      sums[threadIdx.x] += sums[threadIdx.x + half];
    __syncthreads();
  }
  double total = sums[0];
  __syncthreads(); // the next call may write sums again
  return total;
}

/// Each block takes one chunk of one tensor: its squares of g * inverse
/// (rounded to f32 first, as the unscale stores it) summed in double, each
/// thread's in its fixed elements' order and the block's by a fixed tree,
/// into partials[chunk]; a non-finite element sets `found` (null: not
/// checked). The same sum on every run: no atomics.
__global__ void normKernel(DeviceList list, View scale, uint8_t *found, double *partials) {
  float inverse = 1.0f / load(scale.data, scale.dtype, 0);
  for (int64_t chunk = blockIdx.x; chunk < list.chunks; chunk += gridDim.x) {
    const ListEntry &e = entryOfChunk(list.entries, list.count, chunk);
    int64_t begin = (chunk - e.firstChunk) * kChunk, end = min(begin + kChunk, e.size);
    double sum = 0;
    bool bad = false;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      float g = load(e.grad, e.dtype, i), u = g * inverse;
      bad |= num::isNonFiniteF32(g);
      sum += double(u) * u;
    }
    double total = blockSum(sum);
    if (threadIdx.x == 0)
      partials[chunk] = total;
    if (bad && found)
      *found = 1;
  }
}

/// norm = sqrt of the partials' sum, by one block in a fixed order.
__global__ void finishNormKernel(const double *partials, int64_t count, View norm) {
  double sum = 0;
  for (int64_t i = threadIdx.x; i < count; i += blockDim.x)
    sum += partials[i];
  double total = blockSum(sum);
  if (threadIdx.x == 0)
    store(norm.data, norm.dtype, 0, (float)sqrt(total));
}

/// grad_norm ([scale, grads...] -> norm) and, with `check`, found_inf too
/// (check_finite_norm: -> norm, found_inf) in the same pass.
void gradNormOf(LaunchContext &c, bool check) {
  std::vector<int> grads(c.in.size() - 1);
  std::iota(grads.begin(), grads.end(), 1);
  DeviceList list = listOf(c, grads, false, c.state);
  uint8_t *found = check ? c.out[1].as<uint8_t>() : nullptr;
  if (found)
    AMPC_CUDA_CHECK(cudaMemsetAsync(found, 0, 1, c.stream()));
  auto *partials = reinterpret_cast<double *>(
      c.device.scratch(std::max<int64_t>(list.chunks, 1) * sizeof(double)));
  if (list.chunks > 0)
    normKernel<<<(unsigned)std::min<int64_t>(list.chunks, 65535), kThreads, 0, c.stream()>>>(
        list, viewOf(c.in[0]), found, partials);
  finishNormKernel<<<1, kThreads, 0, c.stream()>>>(partials, list.chunks, viewOf(c.out[0]));
  launched(c);
}

/// scale / min(1, max_norm / (norm + 1e-6)), each operation in f32.
__global__ void clipScaleKernel(View norm, View scale, View out, float maxNorm) {
  float factor = maxNorm / (load(norm.data, norm.dtype, 0) + 1e-6f);
  factor = factor < 1.0f || factor != factor ? factor : 1.0f;
  store(out.data, out.dtype, 0, load(scale.data, scale.dtype, 0) / factor);
}

void clipScale(LaunchContext &c) {
  clipScaleKernel<<<1, 1, 0, c.stream()>>>(viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.out[0]),
                                           narrow(c.attrs.getF64("max_norm", 1.0)));
  launched(c);
}

__global__ void lossScaleKernel(const uint8_t *found, View scale, View good, View bad,
                                num::LossScaleRule rule) {
  num::LossScaleState s{load(scale.data, scale.dtype, 0), load(good.data, good.dtype, 0),
                        load(bad.data, bad.dtype, 0)};
  num::updateLossScale(*found != 0, s, rule);
  store(scale.data, scale.dtype, 0, s.scale);
  store(good.data, good.dtype, 0, s.good);
  store(bad.data, bad.dtype, 0, s.bad);
}

void updateLossScaling(LaunchContext &c) {
  num::LossScaleRule rule{c.attrs.getInt("incr_every_n_steps", 2000),
                          c.attrs.getInt("decr_every_n_nan_or_inf", 1),
                          c.attrs.getF64("incr_ratio", 2.0), c.attrs.getF64("decr_ratio", 0.5),
                          c.attrs.getBool("dynamic", true)};
  lossScaleKernel<<<1, 1, 0, c.stream()>>>(c.in[0].as<uint8_t>(), viewOf(c.in[1]),
                                           viewOf(c.in[2]), viewOf(c.in[3]), rule);
  launched(c);
}

// One thread: the history is short (1024 by default) and the step is
// bookkeeping, not on the GEMMs' path.
__global__ void fp8ScaleKernel(float *history, int64_t n, float *scale, float *scaleInv,
                               const float *amax, num::DelayedScalingRule rule) {
  num::updateDelayedScaling(history, n, *amax, *scale, *scaleInv, rule);
}

void fp8ScaleUpdate(LaunchContext &c) {
  num::DelayedScalingRule rule = num::delayedScalingRule(
      c.attrs.getF64("fp8_max", 448.0), c.attrs.getInt("margin", 0),
      c.attrs.getStr("amax_compute", "max") == "most_recent");
  fp8ScaleKernel<<<1, 1, 0, c.stream()>>>(c.in[0].as<float>(), c.in[0].size(),
                                           c.in[1].as<float>(), c.in[2].as<float>(),
                                           c.in[3].as<float>(), rule);
  launched(c);
}

__global__ void sgdKernel(View p, View g, View copy, UpdateScalars s, UpdateSettings cfg) {
  if (*s.found)
    return;
  num::SgdUpdate update = sgdUpdate(load(s.lr.data, s.lr.dtype, 0), cfg);
  float inverse = inverseScale(s);
  AMPC_GRID_STRIDE(i, p.size) {
    float param = load(p.data, p.dtype, i);
    update(param, gradientAt(g.data, g.dtype, s, inverse, i));
    storeUpdated(p, copy, i, param);
  }
}

/// The element updates of the optimizers with one f32 moment, made from
/// the step's rate on the device (Updates.h).
struct MomentumOf {
  __device__ num::MomentumUpdate operator()(float lr, const UpdateSettings &cfg) const {
    return momentumUpdate(lr, cfg);
  }
};
struct LionOf {
  __device__ num::LionUpdate operator()(float lr, const UpdateSettings &cfg) const {
    return lionUpdate(lr, cfg);
  }
};

struct AdagradOf {
  __device__ num::AdagradUpdate operator()(float lr, const UpdateSettings &cfg) const {
    return adagradUpdate(lr, cfg);
  }
};

/// An update with one f32 moment: momentum's velocity, Lion's m, Adagrad's
/// sum.
template <typename Make>
__global__ void oneMomentKernel(View p, View g, View copy, UpdateScalars s, float *moment,
                                UpdateSettings cfg) {
  if (*s.found)
    return;
  auto update = Make()(load(s.lr.data, s.lr.dtype, 0), cfg);
  float inverse = inverseScale(s);
  AMPC_GRID_STRIDE(i, p.size) {
    float param = load(p.data, p.dtype, i);
    update(param, gradientAt(g.data, g.dtype, s, inverse, i), moment[i]);
    storeUpdated(p, copy, i, param);
  }
}

/// RMSprop: v, and the momentum buffer and the gradient's average where
/// the update has them (null where not).
__global__ void rmspropKernel(View p, View g, View copy, UpdateScalars s, float *v,
                              float *buffer, float *average, UpdateSettings cfg) {
  if (*s.found)
    return;
  num::RmspropUpdate update = rmspropUpdate(load(s.lr.data, s.lr.dtype, 0), cfg);
  float inverse = inverseScale(s);
  AMPC_GRID_STRIDE(i, p.size) {
    float param = load(p.data, p.dtype, i);
    float none = 0, alsoNone = 0;
    update(param, gradientAt(g.data, g.dtype, s, inverse, i), v[i], buffer ? buffer[i] : none,
           average ? average[i] : alsoNone);
    storeUpdated(p, copy, i, param);
  }
}

__global__ void adamKernel(View p, View g, View copy, UpdateScalars s, float *m, float *v, View step,
                           UpdateSettings cfg) {
  if (*s.found)
    return;
  num::AdamUpdate update = blockAdamUpdate(load(s.lr.data, s.lr.dtype, 0), cfg, step);
  float inverse = inverseScale(s);
  AMPC_GRID_STRIDE(i, p.size) {
    float param = load(p.data, p.dtype, i);
    update(param, gradientAt(g.data, g.dtype, s, inverse, i), m[i], v[i]);
    storeUpdated(p, copy, i, param);
  }
}

void sgd(LaunchContext &c) {
  sgdKernel<<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), copyView(c), scalarsOf(c), settingsOf(c));
  launched(c);
}

template <typename Make> void oneMoment(LaunchContext &c) {
  oneMomentKernel<Make><<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), copyView(c), scalarsOf(c), c.in[4].as<float>(),
      settingsOf(c));
  launched(c);
}

void rmsprop(LaunchContext &c) {
  UpdateOperands u = operandsOf(c);
  float *buffer = u.momentumBuffer >= 0 ? c.in[u.momentumBuffer].as<float>() : nullptr;
  float *average = u.gradAverage >= 0 ? c.in[u.gradAverage].as<float>() : nullptr;
  rmspropKernel<<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), copyView(c), scalarsOf(c),
      c.in[UpdateOperands::firstMoment].as<float>(), buffer, average, settingsOf(c));
  launched(c);
}

void adam(LaunchContext &c) {
  adamKernel<<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), copyView(c), scalarsOf(c), c.in[4].as<float>(),
      c.in[5].as<float>(), viewOf(c.in[6]), settingsOf(c));
  launched(c);
}

/// step += 1 unless found_inf (null: always).
__global__ void countStepKernel(View step, const uint8_t *found) {
  if (!found || !*found)
    store(step.data, step.dtype, 0, load(step.data, step.dtype, 0) + 1.0f);
}

void countStep(LaunchContext &c) {
  const uint8_t *found = c.in.size() > 1 ? c.in[1].as<uint8_t>() : nullptr;
  countStepKernel<<<1, 1, 0, c.stream()>>>(viewOf(c.in[0]), found);
  launched(c);
}

/// record_step (runtime/core/History.h): the step's row, then count += 1.
__global__ void recordStepKernel(double *history, int64_t rows, int64_t *count,
                                 const uint8_t *found, View loss, View lr, View scale, View norm) {
  double *row = history + (*count % rows) * kHistoryFields;
  row[kStepLoss] = load(loss.data, loss.dtype, 0);
  row[kStepLr] = load(lr.data, lr.dtype, 0);
  row[kStepLossScale] = scale.data ? (double)load(scale.data, scale.dtype, 0) : (double)NAN;
  row[kStepSkipped] = *found ? 1.0 : 0.0;
  row[kStepGradNorm] = norm.data ? (double)load(norm.data, norm.dtype, 0) : (double)NAN;
  ++*count;
}

void recordStep(LaunchContext &c) {
  View none{nullptr, DType::F32, 0, 0, {}};
  HistoryOperands h = historyOperandsOf(c.step, c.attrs);
  recordStepKernel<<<1, 1, 0, c.stream()>>>(
      c.in[0].as<double>(), c.in[0].shape[0], c.in[1].as<int64_t>(), c.in[2].as<uint8_t>(),
      viewOf(c.in[3]), viewOf(c.in[4]), h.lossScale >= 0 ? viewOf(c.in[h.lossScale]) : none,
      h.gradNorm >= 0 ? viewOf(c.in[h.gradNorm]) : none);
  launched(c);
}

__global__ void lrScheduleKernel(View peak, View step, View total, View lr, num::LrSchedule s) {
  double rate = s.at(load(peak.data, peak.dtype, 0), load(step.data, step.dtype, 0),
                     load(total.data, total.dtype, 0));
  store(lr.data, lr.dtype, 0, (float)rate);
}

void lrSchedule(LaunchContext &c) {
  lrScheduleKernel<<<1, 1, 0, c.stream()>>>(viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.in[2]),
                                            viewOf(c.out[0]), lrScheduleOf(c.step, c.attrs));
  launched(c);
}

__global__ void assignKernel(View target, View value) {
  AMPC_GRID_STRIDE(i, target.size) {
    store(target.data, target.dtype, i, load(value.data, value.dtype, i));
  }
}

void assign(LaunchContext &c) {
  const TensorRef &target = c.in[0], &value = c.in[1];
  if (target.dtype == value.dtype) {
    if (target.data != value.data)
      AMPC_CUDA_CHECK(cudaMemcpyAsync(target.data, value.data, target.bytes(),
                                      cudaMemcpyDeviceToDevice, c.stream()));
    return;
  }
  assignKernel<<<blocksFor(target.size()), kThreads, 0, c.stream()>>>(viewOf(target),
                                                                        viewOf(value));
  launched(c);
}

__global__ void restoreKernel(std::byte *target, const std::byte *backup, int64_t bytes,
                              const uint8_t *found) {
  if (!*found)
    return;
  AMPC_GRID_STRIDE(i, bytes) { target[i] = backup[i]; }
}

void restoreIfSkipped(LaunchContext &c) {
  restoreKernel<<<blocksFor(c.in[0].bytes()), kThreads, 0, c.stream()>>>(
      c.in[0].as<std::byte>(), c.in[1].as<std::byte>(), c.in[0].bytes(), c.in[2].as<uint8_t>());
  launched(c);
}

/// acc += grad, in f32 per element, rounded to acc's dtype.
__global__ void accumulateKernel(View acc, View grad) {
  AMPC_GRID_STRIDE(i, acc.size) {
    store(acc.data, acc.dtype, i, load(acc.data, acc.dtype, i) + load(grad.data, grad.dtype, i));
  }
}

void accumulate(LaunchContext &c) {
  accumulateKernel<<<blocksFor(c.in[0].size()), kThreads, 0, c.stream()>>>(viewOf(c.in[0]),
                                                                            viewOf(c.in[1]));
  launched(c);
}

__global__ void incrementKernel(int64_t *counter, const uint8_t *flag) {
  *counter += flag ? (int64_t)(*flag != 0) : 1;
}

void increment(LaunchContext &c) {
  incrementKernel<<<1, 1, 0, c.stream()>>>(
      c.in[0].as<int64_t>(), c.in.size() > 1 ? c.in[1].as<uint8_t>() : nullptr);
  launched(c);
}

} // namespace

void checkFinitePart(LaunchContext &c, const std::vector<int> &inputs, uint8_t *found, bool first,
                     DeviceMemory &table, cudaStream_t stream) {
  checkList(c, listOf(c, inputs, false, table), nullptr, found, first, stream);
}

void addTrainingKernels(KernelTable &t) {
  t[Kernel::CheckFiniteAndUnscale] = [](LaunchContext &c) { checkFinite(c, true); };
  t[Kernel::CheckFinite] = [](LaunchContext &c) { checkFinite(c, false); };
  t[Kernel::UpdateLossScaling] = updateLossScaling;
  t[Kernel::Fp8ScaleUpdate] = fp8ScaleUpdate;
  t[Kernel::Sgd] = sgd;
  t[Kernel::Momentum] = oneMoment<MomentumOf>;
  t[Kernel::Adam] = adam;
  t[Kernel::Lion] = oneMoment<LionOf>;
  t[Kernel::Rmsprop] = rmsprop;
  t[Kernel::Adagrad] = oneMoment<AdagradOf>;
  t[Kernel::CountStep] = countStep;
  t[Kernel::LrSchedule] = lrSchedule;
  t[Kernel::GradNorm] = [](LaunchContext &c) { gradNormOf(c, false); };
  t[Kernel::CheckFiniteNorm] = [](LaunchContext &c) { gradNormOf(c, true); };
  t[Kernel::ClipScale] = clipScale;
  t[Kernel::RecordStep] = recordStep;
  t[Kernel::Assign] = assign;
  t[Kernel::RestoreIfSkipped] = restoreIfSkipped;
  t[Kernel::Accumulate] = accumulate;
  t[Kernel::Increment] = increment;
}

} // namespace ampc::rt::cuda
