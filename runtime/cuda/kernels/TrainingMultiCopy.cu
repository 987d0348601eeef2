// Grouped copies. A run of consecutive `assign` steps between tensors of one
// dtype, or of `restore_if_skipped` steps reading the same found_inf, runs as
// one launch over a table of (target, source, bytes), as the multi-tensor
// updates do (TrainingMultiTensor.cu): ResNet-50's 106 batch-norm running
// statistics are saved before each step and restored after a skipped one,
// 212 launches of a few hundred bytes to 8 KB each, now two. A copy moves
// bytes, so the results are the steps' own.
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

struct CopyEntry {
  std::byte *target;
  const std::byte *source;
  int64_t bytes, firstChunk;
};

constexpr int64_t kChunkBytes = 16 * kThreads * 16; // 16 16-byte words a lane

/// Copies each entry's bytes, 16 at a time where the entry allows it; with
/// `found` (restore_if_skipped) only when the step was skipped.
__global__ void multiCopy(const CopyEntry *entries, int count, int64_t chunks,
                          const uint8_t *found) {
  if (found && !*found)
    return;
  for (int64_t chunk = blockIdx.x; chunk < chunks; chunk += gridDim.x) {
    const CopyEntry &e = entryOfChunk(entries, count, chunk);
    int64_t begin = (chunk - e.firstChunk) * kChunkBytes;
    int64_t end = begin + kChunkBytes < e.bytes ? begin + kChunkBytes : e.bytes;
    bool words = ((uintptr_t)e.target | (uintptr_t)e.source | (uint64_t)e.bytes) % 16 == 0;
    if (words) {
      for (int64_t i = begin + 16 * threadIdx.x; i < end; i += 16 * blockDim.x)
        *reinterpret_cast<uint4 *>(e.target + i) = *reinterpret_cast<const uint4 *>(e.source + i);
    } else {
      for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
        e.target[i] = e.source[i];
    }
  }
}

/// A copy step's target and source, and its condition (null: none).
struct CopyStep {
  const TensorRef &target, &source;
  const uint8_t *found;
};

CopyStep copyOf(const LaunchContext &c) {
  bool restore = c.step.kernel == Kernel::RestoreIfSkipped;
  return {c.in[0], c.in[1], restore ? c.in[2].as<uint8_t>() : nullptr};
}

bool isCopy(const LaunchContext &c) {
  if (c.step.kernel == Kernel::RestoreIfSkipped)
    return true;
  return c.step.kernel == Kernel::Assign && c.in[0].dtype == c.in[1].dtype;
}

} // namespace

bool joinsCopyGroup(const LaunchContext &first, const LaunchContext &next) {
  return isCopy(first) && isCopy(next) && first.step.kernel == next.step.kernel &&
         copyOf(first).found == copyOf(next).found;
}

void runCopyGroup(const std::vector<LaunchContext *> &members, DeviceMemory &table) {
  LaunchContext &c = *members.front();
  std::vector<CopyEntry> entries;
  int64_t chunks = 0;
  for (LaunchContext *m : members) {
    CopyStep s = copyOf(*m);
    if (s.target.data == s.source.data || s.target.bytes() == 0)
      continue;
    auto bytes = (int64_t)s.target.bytes();
    entries.push_back({static_cast<std::byte *>(s.target.data),
                       static_cast<const std::byte *>(s.source.data), bytes, chunks});
    chunks += (bytes + kChunkBytes - 1) / kChunkBytes;
  }
  if (chunks == 0)
    return;
  const CopyEntry *list = uploadOnce(c, table, entries);
  unsigned blocks = (unsigned)std::min<int64_t>(chunks, 65535);
  multiCopy<<<blocks, kThreads, 0, c.stream()>>>(list, (int)entries.size(), chunks,
                                                 copyOf(c).found);
  launched(c);
}

} // namespace ampc::rt::cuda
