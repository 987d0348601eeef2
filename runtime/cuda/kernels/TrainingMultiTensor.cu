// Multi-tensor optimizer updates. A run of consecutive update steps of one
// kind (sgd, momentum, adam, lion, adagrad) with the same attributes that read the same lr,
// found_inf, grad_scale and step count runs as one launch over a table of its
// tensors, as PyTorch's fused optimizers do (multi_tensor_apply): BERT-base's
// 201 SGD steps become one kernel. Each element is computed exactly as the
// single-tensor kernel computes it, so the results are the same bits; the
// backend check compares whole runs with the steps run one by one. Each
// thread loads several elements before it updates any (unrolledStride), four
// consecutive ones a load where the tensor's operands allow it (Quads.h).
#include "runtime/core/Convert.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/cuda/kernels/Quads.h"
#include "runtime/cuda/kernels/Updates.h"

namespace ampc::rt::cuda {
namespace {

/// One tensor of a group: its param, gradient, f32 moments and the
/// low-precision copy to rewrite (null: none).
struct UpdateEntry {
  void *param;
  const void *grad;
  float *m, *v;
  void *copy;
  DType paramType, gradType, copyType;
  int64_t size, firstChunk;
  bool quads; // four elements a load of each operand (Quads.h)
};

constexpr int64_t kChunk = 16 * kThreads;

enum class Kind { Sgd, Momentum, Adam, Lion, Adagrad };

Kind kindOf(Kernel kernel) {
  switch (kernel) {
  case Kernel::Sgd: return Kind::Sgd;
  case Kernel::Momentum: return Kind::Momentum;
  case Kernel::Lion: return Kind::Lion;
  case Kernel::Adagrad: return Kind::Adagrad;
  default: return Kind::Adam;
  }
}

/// W elements' params, gradients and moments, loaded before any is updated.
template <int W> struct Elements {
  float p[W], g[W], m[W], v[W];
};

template <Kind K>
__global__ void multiUpdate(const UpdateEntry *entries, int count, int64_t chunks,
                            UpdateScalars s, UpdateSettings cfg, View step) {
  if (*s.found)
    return;
  float lr = load(s.lr.data, s.lr.dtype, 0), inverse = inverseScale(s);
  num::AdamUpdate adam{};
  if constexpr (K == Kind::Adam)
    adam = blockAdamUpdate(lr, cfg, step);
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const UpdateEntry &e = entryOfChunk(entries, count, chunk);
    int64_t begin = (chunk - e.firstChunk) * kChunk, end = min(begin + kChunk, e.size);
    quadStride(
        begin, end, threadIdx.x, blockDim.x, e.quads,
        [&](auto w, int64_t i) {
          constexpr int W = decltype(w)::value;
          Elements<W> x;
          loadUnit<W>(e.param, e.paramType, i, x.p);
          loadUnit<W>(e.grad, e.gradType, i, x.g);
          if constexpr (K != Kind::Sgd)
            loadUnit<W>(e.m, DType::F32, i, x.m);
          if constexpr (K == Kind::Adam)
            loadUnit<W>(e.v, DType::F32, i, x.v);
          return x;
        },
        [&](auto w, int64_t i, auto x) {
          constexpr int W = decltype(w)::value;
#pragma unroll
          for (int k = 0; k < W; ++k) {
            x.g[k] = unscaled(s, inverse, x.g[k]);
            if constexpr (K == Kind::Sgd)
              sgdUpdate(lr, cfg)(x.p[k], x.g[k]);
            else if constexpr (K == Kind::Momentum)
              momentumUpdate(lr, cfg)(x.p[k], x.g[k], x.m[k]);
            else if constexpr (K == Kind::Lion)
              lionUpdate(lr, cfg)(x.p[k], x.g[k], x.m[k]);
            else if constexpr (K == Kind::Adagrad)
              adagradUpdate(lr, cfg)(x.p[k], x.g[k], x.m[k]);
            else
              adam(x.p[k], x.g[k], x.m[k], x.v[k]);
          }
          storeUnit<W>(e.param, e.paramType, i, x.p);
          if (e.copy)
            storeUnit<W>(e.copy, e.copyType, i, x.p);
          if constexpr (K != Kind::Sgd)
            storeUnit<W>(e.m, DType::F32, i, x.m);
          if constexpr (K == Kind::Adam)
            storeUnit<W>(e.v, DType::F32, i, x.v);
        });
  }
}

} // namespace

/// LAMB's step needs its tensor's norms first (TrainingLamb.cu): it runs
/// alone. So does RMSprop, whose states depend on its attributes.
bool isGroupedUpdate(Kernel kernel) {
  return traitsOf(kernel).has(kOptimizerUpdate) && kernel != Kernel::Lamb &&
         kernel != Kernel::Rmsprop;
}

/// An update's attributes but whether it rewrites a copy: each tensor of a
/// group has its own copy or none (BERT-base's weights have f16 copies,
/// its layer norms' scales none, and they alternate).
Json attrsButCopy(const LaunchContext &c) {
  Json attrs = c.step.attrs;
  attrs.erase(attr::kWritesCopy);
  return attrs;
}

bool joinsUpdateGroup(const LaunchContext &first, const LaunchContext &next) {
  if (next.step.kernel != first.step.kernel || !isGroupedUpdate(first.step.kernel))
    return false;
  UpdateOperands a = operandsOf(first), b = operandsOf(next);
  // The copy is the tensor's own; the scalars are shared.
  size_t shared = first.in.size() - (a.copy >= 0 ? 1 : 0);
  if (next.in.size() - (b.copy >= 0 ? 1 : 0) != shared || attrsButCopy(next) != attrsButCopy(first))
    return false;
  for (size_t i = UpdateOperands::lr; i < shared; ++i) {
    bool perTensor = (int)i >= UpdateOperands::firstMoment &&
                     (int)i < UpdateOperands::firstMoment + a.moments;
    if (!perTensor && next.in[i].data != first.in[i].data)
      return false;
  }
  return true;
}

void runUpdateGroup(const std::vector<LaunchContext *> &members, DeviceMemory &table) {
  LaunchContext &c = *members.front();
  Kind kind = kindOf(c.step.kernel);
  int moments = operandsOf(c).moments;
  std::vector<UpdateEntry> entries;
  int64_t chunks = 0;
  for (LaunchContext *m : members) {
    const TensorRef &p = m->in[0], &g = m->in[1];
    float *first = moments > 0 ? m->in[UpdateOperands::firstMoment].as<float>() : nullptr;
    float *second = moments > 1 ? m->in[UpdateOperands::firstMoment + 1].as<float>() : nullptr;
    View copy = copyView(*m);
    bool quads = quadAligned(p.data, p.dtype) && quadAligned(g.data, g.dtype) &&
                 (!first || quadAligned(first, DType::F32)) &&
                 (!second || quadAligned(second, DType::F32)) &&
                 (!copy.data || quadAligned(copy.data, copy.dtype));
    entries.push_back({p.data, g.data, first, second, copy.data, p.dtype, g.dtype, copy.dtype,
                       p.size(), chunks, quads});
    chunks += (p.size() + kChunk - 1) / kChunk;
  }
  if (chunks == 0)
    return;
  const UpdateEntry *list = uploadOnce(c, table, entries);
  int count = (int)entries.size();
  unsigned blocks = (unsigned)std::min<int64_t>(chunks, 65535);
  UpdateScalars s = scalarsOf(c);
  View none{nullptr, DType::F32, 0, 0, {}};
  UpdateSettings cfg = settingsOf(c);
  switch (kind) {
  case Kind::Sgd:
    multiUpdate<Kind::Sgd><<<blocks, kThreads, 0, c.stream()>>>(list, count, chunks, s, cfg, none);
    break;
  case Kind::Momentum:
    multiUpdate<Kind::Momentum><<<blocks, kThreads, 0, c.stream()>>>(list, count, chunks, s, cfg,
                                                                      none);
    break;
  case Kind::Lion:
    multiUpdate<Kind::Lion><<<blocks, kThreads, 0, c.stream()>>>(list, count, chunks, s, cfg, none);
    break;
  case Kind::Adagrad:
    multiUpdate<Kind::Adagrad><<<blocks, kThreads, 0, c.stream()>>>(list, count, chunks, s, cfg,
                                                                     none);
    break;
  case Kind::Adam:
    multiUpdate<Kind::Adam><<<blocks, kThreads, 0, c.stream()>>>(list, count, chunks, s, cfg,
                                                                  viewOf(c.in[6]));
    break;
  }
  launched(c);
}

} // namespace ampc::rt::cuda
