#include "runtime/Executor.h"

#include <chrono>
#include <malloc.h>
#include <cmath>
#include <random>

#include "runtime/Half.h"

namespace ampc::rt {
namespace {

std::byte *allocate(int64_t bytes) {
  size_t size = std::max<int64_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  void *p = std::aligned_alloc(kAlignment, size);
  if (!p)
    throw RuntimeError("cannot allocate " + std::to_string(bytes) + " bytes");
  std::memset(p, 0, size);
  return static_cast<std::byte *>(p);
}

uint64_t hashName(const std::string &s, uint64_t seed) {
  uint64_t h = 1469598103934665603ull ^ (seed * 0x9E3779B97F4A7C15ull);
  for (char ch : s)
    h = (h ^ (unsigned char)ch) * 1099511628211ull;
  return h;
}

} // namespace

std::pair<double, double> fans(const std::vector<int64_t> &shape) {
  if (shape.empty())
    return {1, 1};
  if (shape.size() == 1)
    return {double(shape[0]), double(shape[0])};
  if (shape.size() == 2)
    return {double(shape[0]), double(shape[1])};
  double receptive = 1;
  for (size_t i = 1; i + 1 < shape.size(); ++i)
    receptive *= shape[i];
  return {receptive * shape.back(), receptive * shape[0]};
}

/// Kernels allocate scratch tensors on every call. glibc would serve large
/// ones with fresh mmaps and unmap them on free, so every call would fault
/// its pages in again (several ms per training step in a VM); keeping freed
/// memory in the heap makes the next allocation reuse resident pages.
static void keepFreedMemory() {
  static const bool done = [] {
    mallopt(M_MMAP_THRESHOLD, 512 << 20);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    return true;
  }();
  (void)done;
}

Executor::Executor(Plan plan, ExecOptions options)
    : plan_(std::move(plan)), options_(options) {
  keepFreedMemory();
  for (const Step &s : plan_.steps) {
    KernelFn k = findKernel(s.kernel);
    if (!k)
      throw PlanError("step '" + s.name + "': unknown kernel '" + s.kernel + "'");
    kernels_.push_back(k);
    applyOnly_.push_back(s.attrs.value("phase", "") == "apply");
    firstOnly_.push_back(s.attrs.value("phase", "") == "first");
  }
  arena_.reset(allocate(plan_.arenaBytes));
  persistent_.reset(allocate(plan_.persistentBytes));
  for (const Buffer &b : plan_.buffers)
    if (b.kind == BufferKind::Const) {
      std::vector<float> values(b.data.begin(), b.data.end());
      TensorRef t = tensor(b.id);
      if (isFloat(b.dtype))
        fromF32(values.data(), t.data, t.dtype, values.size());
      else
        for (size_t i = 0; i < b.data.size(); ++i) {
          if (b.dtype == DType::I64) t.as<int64_t>()[i] = (int64_t)b.data[i];
          else if (b.dtype == DType::I32) t.as<int32_t>()[i] = (int32_t)b.data[i];
          else t.as<uint8_t>()[i] = b.data[i] != 0;
        }
    }
  initParams(options.seed);
}

TensorRef Executor::tensor(int id) const {
  const Buffer &b = plan_.buffers.at(id);
  std::byte *base = b.isPersistent() ? persistent_.get() : arena_.get();
  return TensorRef{base + b.offset, b.dtype, b.shape};
}

TensorRef Executor::tensor(const std::string &name) const {
  int id = plan_.find(name);
  if (id < 0)
    throw RuntimeError("the plan has no buffer '" + name + "'");
  return tensor(id);
}

void Executor::initParams(uint64_t seed) {
  for (const Buffer &b : plan_.buffers) {
    if (b.kind != BufferKind::Param)
      continue;
    std::string kind = b.init.value("kind", "zeros");
    auto field = [&](const char *k, double d) { return b.init.value(k, d); };
    // An f32 master (AMP O2) starts from its low-precision param's values.
    std::string rngName = b.name;
    if (rngName.size() > 7 && rngName.compare(rngName.size() - 7, 7, ".master") == 0 &&
        plan_.find(rngName.substr(0, rngName.size() - 7)) >= 0)
      rngName.resize(rngName.size() - 7);
    std::mt19937_64 rng(hashName(rngName, seed));
    int64_t n = numElements(b.shape);
    std::vector<float> values(n, 0.0f);
    auto [fanIn, fanOut] = fans(b.shape);
    if (kind == "ones" || kind == "constant") {
      std::fill(values.begin(), values.end(), kind == "ones" ? 1.0f : float(field("value", 0)));
    } else if (kind == "normal" || kind == "kaiming_normal") {
      double mean = kind == "normal" ? field("mean", 0) : 0;
      double std = kind == "normal" ? field("std", 1) : std::sqrt(2.0 / fanIn);
      std::normal_distribution<double> dist(mean, std);
      for (float &v : values)
        v = float(dist(rng));
    } else if (kind == "uniform" || kind == "xavier_uniform") {
      double limit = std::sqrt(6.0 / (fanIn + fanOut));
      double low = kind == "uniform" ? field("low", 0) : -limit;
      double high = kind == "uniform" ? field("high", 1) : limit;
      std::uniform_real_distribution<double> dist(low, high);
      for (float &v : values)
        v = float(dist(rng));
    } else if (kind != "zeros") {
      throw PlanError("buffer '" + b.name + "': unknown init kind '" + kind + "'");
    }
    TensorRef t = tensor(b.id);
    if (isFloat(b.dtype))
      fromF32(values.data(), t.data, t.dtype, n);
  }
}

void Executor::run(bool apply, bool first) {
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    if ((applyOnly_[i] && !apply) || (firstOnly_[i] && !first))
      continue;
    const Step &s = plan_.steps[i];
    KernelContext c{s, {}, {}, options_.training, options_.seed, iteration_};
    for (int id : s.inputs)
      c.in.push_back(tensor(id));
    for (int id : s.outputs)
      c.out.push_back(tensor(id));
    if (!options_.profile) {
      kernels_[i](c);
      continue;
    }
    auto t0 = std::chrono::steady_clock::now();
    kernels_[i](c);
    profile_[s.kernel] +=
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
  ++iteration_;
}

} // namespace ampc::rt
