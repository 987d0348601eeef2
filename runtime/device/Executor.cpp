#include "runtime/device/Executor.h"

#include <algorithm>
#include <cstring>

#include "runtime/core/BufferInit.h"
#include "runtime/core/Convert.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/device/Registry.h"

namespace ampc::rt {
namespace {

std::string describe(const Target &t) {
  return t.name + " (alignment " + std::to_string(t.alignment) + ", " +
         (t.fusedCasts ? "fused casts" : "no fused casts") + ", " +
         (t.inOrderLists ? "in-order lists" : "whole lists") +
         (t.gemmEpilogues ? ", GEMM epilogues" : "") +
         (t.elementwiseChains ? ", elementwise chains" : "") +
         (t.maxAttentionHeadDim ? ", attention head_dim up to " +
                                      std::to_string(t.maxAttentionHeadDim)
                                : std::string()) +
         (t.fp8GemmsTN ? ", FP8 GEMMs TN" : "") + ")";
}

/// Every buffer lies inside its region, and every step's kernel (the plan
/// reader knows it) has the arity and signature its traits ask for, overlaps
/// its inputs only where it may, and is one the backend implements: no plan,
/// however made, lets a kernel touch memory outside its buffers.
void checkSteps(const Plan &plan, const Backend &backend) {
  for (const Buffer &b : plan.buffers) {
    int64_t region = b.isPersistent() ? plan.persistentBytes : plan.arenaBytes;
    if (b.offset < 0 || b.bytes < 0 || b.offset > region - b.bytes)
      throw PlanError("buffer '" + b.name + "': outside its region");
  }
  std::vector<std::string> kernels = backend.kernelNames();
  for (const Step &s : plan.steps) {
    std::string where = "step '" + s.name + "': ";
    const char *kernel = kernelName(s.kernel);
    if (!std::binary_search(kernels.begin(), kernels.end(), kernel))
      throw PlanError(where + "the " + backend.name() + " backend has no kernel '" + kernel + "'");
    checkStepContract(plan, s);
  }
}

} // namespace

Executor::Executor(Plan plan, ExecOptions options)
    : plan_(std::move(plan)), options_(std::move(options)),
      backend_(createBackend(options_.device)) {
  const Target &target = backend_->target();
  // A backend may take plans of another name (cuda-emulated takes cuda's).
  if (plan_.target.name != target.name && !backend_->accepts(plan_.target))
    throw PlanError("the plan was compiled for the " + plan_.target.name +
                    " target; the " + backend_->name() + " backend runs " + target.name +
                    " plans (recompile with ampc compile --device " + target.name + ")");
  if (!backend_->accepts(plan_.target))
    throw PlanError("the plan's target " + describe(plan_.target) + " does not fit this " +
                    backend_->name() + " backend's " + describe(target) +
                    " (recompile with ampc compile)");
  checkSteps(plan_, *backend_);
  copies_.resize(plan_.buffers.size());
  for (const Buffer &b : plan_.buffers)
    if (b.copyOf >= 0)
      copies_[b.copyOf].push_back(b.id);
  Device &device = backend_->device();
  arena_ = device.allocate(plan_.arenaBytes, target.alignment);
  persistent_ = device.allocate(plan_.persistentBytes, target.alignment);
  if (options_.communicator)
    if ((deviceCommunicator_ = backend_->deviceCommunicator(*options_.communicator)))
      options_.communicator = deviceCommunicator_.get();
  program_ = backend_->prepare(plan_, {arena_.get(), persistent_.get()}, options_);
  for (const Buffer &b : plan_.buffers)
    if (b.kind == BufferKind::Const) {
      std::vector<std::byte> bytes = constBytes(b);
      write(b.id, bytes.data(), bytes.size());
    }
  initParams(options_.seed);
}

Executor::~Executor() = default;

int Executor::id(const std::string &name) const {
  int id = plan_.find(name);
  if (id < 0)
    throw RuntimeError("the plan has no buffer '" + name + "'");
  return id;
}

const Buffer &Executor::buffer(int id, size_t bytes) const {
  if (id < 0 || (size_t)id >= plan_.buffers.size())
    throw RuntimeError("the plan has no buffer " + std::to_string(id));
  const Buffer &b = plan_.buffers[id];
  if ((int64_t)bytes != b.bytes)
    throw RuntimeError("buffer '" + b.name + "' holds " + std::to_string(b.bytes) +
                       " bytes, not " + std::to_string(bytes));
  return b;
}

void Executor::write(int id, const void *src, size_t bytes) {
  const Buffer &b = buffer(id, bytes);
  if (bytes == 0) // an empty tensor: its data pointer may be null
    return;
  std::byte *base = b.isPersistent() ? persistent_.get() : arena_.get();
  backend_->device().upload(base + b.offset, src, bytes);
  // A param's low-precision copies follow it (docs/runtime.md, "Weight copies").
  for (int c : copies_[id]) {
    const Buffer &copy = plan_.buffers[c];
    std::vector<std::byte> rounded(copy.bytes);
    convertElements(src, b.dtype, rounded.data(), copy.dtype, numElements(b.shape));
    backend_->device().upload(persistent_.get() + copy.offset, rounded.data(), copy.bytes);
  }
}

void Executor::read(int id, void *dst, size_t bytes) const {
  const Buffer &b = buffer(id, bytes);
  if (bytes == 0)
    return;
  const std::byte *base = b.isPersistent() ? persistent_.get() : arena_.get();
  backend_->device().download(dst, base + b.offset, bytes);
}

std::vector<std::byte> Executor::readBytes(int id) const {
  std::vector<std::byte> bytes(plan_.buffers.at(id).bytes);
  read(id, bytes.data(), bytes.size());
  return bytes;
}

void Executor::writeF32(int id, const std::vector<float> &values) {
  const Buffer &b = plan_.buffers.at(id);
  if ((int64_t)values.size() != numElements(b.shape))
    throw RuntimeError("buffer '" + b.name + "' holds " + std::to_string(numElements(b.shape)) +
                       " elements, not " + std::to_string(values.size()));
  std::vector<std::byte> bytes(b.bytes);
  fromF32(values.data(), bytes.data(), b.dtype, values.size());
  write(id, bytes.data(), bytes.size());
}

std::vector<float> Executor::readF32(int id) const {
  std::vector<std::byte> bytes = readBytes(id);
  std::vector<float> values(numElements(plan_.buffers[id].shape));
  toF32(bytes.data(), plan_.buffers[id].dtype, values.data(), values.size());
  return values;
}

double Executor::readScalar(int id) const {
  const Buffer &b = plan_.buffers.at(id);
  if (numElements(b.shape) != 1)
    throw RuntimeError("buffer '" + b.name + "' is not a scalar");
  return loadElement(readBytes(id).data(), b.dtype, 0);
}

void Executor::writeScalar(int id, double value) {
  const Buffer &b = plan_.buffers.at(id);
  if (numElements(b.shape) != 1)
    throw RuntimeError("buffer '" + b.name + "' is not a scalar");
  std::byte bytes[8] = {};
  storeElement(bytes, b.dtype, 0, value);
  write(id, bytes, b.bytes);
}

void Executor::initParams(uint64_t seed) {
  for (const Buffer &b : plan_.buffers)
    if (b.kind == BufferKind::Param && b.copyOf < 0) { // copies follow their params
      std::vector<float> values = initialValues(plan_, b, seed);
      if (isStoredFloat(b.dtype))
        writeF32(b.id, values);
    }
}

void Executor::run(bool apply, bool first) {
  program_->run({apply, first});
  ++iteration_;
}

void Executor::runStep(size_t index) {
  if (index >= plan_.steps.size())
    throw RuntimeError("the plan has no step " + std::to_string(index));
  program_->runStep(index);
}

void Executor::snapshotPersistent() {
  Device &device = backend_->device();
  if (!snapshot_)
    snapshot_ = device.allocate(plan_.persistentBytes, backend_->target().alignment);
  device.copy(snapshot_.get(), persistent_.get(), plan_.persistentBytes);
}

std::vector<std::byte> Executor::snapshotBytes() const {
  std::vector<std::byte> bytes(snapshot_ ? plan_.persistentBytes : 0);
  if (!bytes.empty())
    backend_->device().download(bytes.data(), snapshot_.get(), bytes.size());
  return bytes;
}

void Executor::writePersistent(const std::vector<std::byte> &bytes) {
  if ((int64_t)bytes.size() != plan_.persistentBytes)
    throw RuntimeError("the persistent region holds " + std::to_string(plan_.persistentBytes) +
                       " bytes, not " + std::to_string(bytes.size()));
  backend_->device().upload(persistent_.get(), bytes.data(), bytes.size());
}

void Executor::setIterations(uint64_t n) {
  iteration_ = n;
  if (plan_.iteration >= 0) {
    int64_t v = (int64_t)n;
    write(plan_.iteration, &v, sizeof v);
  }
}

void Executor::synchronize() { backend_->device().synchronize(); }

const Profile &Executor::profile() const { return program_->profile(); }

} // namespace ampc::rt
