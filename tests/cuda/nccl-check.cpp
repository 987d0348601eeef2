// The NCCL communicator on one GPU rank (NCCL refuses two ranks on one GPU,
// and the GPU machine has one): bootstrapped through the local communicator
// as through MPI, it sums a packed f16 bucket, an unpacked f32 pair and a
// bf16 tensor in place on the compute stream; over one rank every sum is
// the value itself. Exit 77 (a skip) without a GPU or the CUDA backend.
// `ampc-nccl-check cuda-emulated` runs the same on the CUDA backend built
// for the host, through its emulated NCCL (docs/cuda.md).
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/core/Convert.h"
#include "runtime/core/Errors.h"
#include "runtime/device/Backend.h"
#include "runtime/device/Registry.h"

using namespace ampc::rt;

int main(int argc, char **argv) {
  std::string name = argc > 1 ? argv[1] : "cuda";
  std::unique_ptr<Backend> backend;
  try {
    backend = createBackend(name);
  } catch (const DeviceUnavailable &e) {
    std::printf("skipped: %s\n", e.what());
    return 77;
  }
  std::unique_ptr<Communicator> host = localCommunicator();
  std::unique_ptr<Communicator> nccl = backend->deviceCommunicator(*host);
  if (!nccl || nccl->size() != 1 || nccl->rank() != 0) {
    std::printf("FAIL: backend %s made no one-rank NCCL communicator\n", name.c_str());
    return 1;
  }
  Device &device = backend->device();
  int failures = 0;
  auto run = [&](DType dtype, std::vector<int64_t> sizes, bool packed) {
    size_t element = dtypeSize(dtype), total = 0;
    std::vector<size_t> offsets;
    for (int64_t n : sizes) {
      offsets.push_back(total);
      total += n * element + (packed ? 0 : 512); // a gap: not packed
    }
    DeviceMemory memory = device.allocate(total, 256);
    std::vector<std::byte> host(total), back(total);
    for (size_t i = 0; i < total / element; ++i)
      storeElement(host.data(), dtype, i, 0.25 * double(int(i % 97) - 48));
    device.upload(memory.get(), host.data(), total);
    std::vector<TensorRef> refs;
    for (size_t k = 0; k < sizes.size(); ++k)
      refs.push_back(TensorRef{memory.get() + offsets[k], dtype, {sizes[k]}});
    nccl->allReduce(refs, ReduceOp::Sum);
    device.download(back.data(), memory.get(), total);
    device.synchronize();
    bool same = host == back;
    std::printf("%s %s %zu tensors: %s\n", dtypeName(dtype), packed ? "packed" : "apart",
                sizes.size(), same ? "unchanged, as one rank's sum" : "FAIL: changed");
    failures += !same;
  };
  try {
    run(DType::F16, {1000, 24, 3000}, true);
    run(DType::F32, {100, 7}, false);
    run(DType::BF16, {4096}, true);
  } catch (const RuntimeError &e) {
    std::printf("FAIL: %s\n", e.what());
    return 1;
  }
  return failures ? 1 : 0;
}
