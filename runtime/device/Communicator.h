// Collectives over the ranks of a data-parallel run, on tensors in device
// memory: the seam that MPI (CPU ranks) and NCCL (GPU ranks) plug into. A
// single-rank run uses the local communicator, for which every collective is
// the identity.
#ifndef AMPC_RUNTIME_DEVICE_COMMUNICATOR_H
#define AMPC_RUNTIME_DEVICE_COMMUNICATOR_H

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/DType.h"

namespace ampc::rt {

/// Max: the largest over the ranks (FP8 amaxes, f32 only).
enum class ReduceOp { Sum, Average, Max };

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces each tensor by its sum (mean, max) over all ranks, in place. All
  /// tensors of one call share a dtype; every rank passes the same shapes.
  virtual void allReduce(const std::vector<TensorRef> &tensors, ReduceOp op) = 0;
  /// Copies `bytes` of host memory from rank `root` to every rank (the
  /// bootstrap of a device communicator, such as NCCL's unique id).
  virtual void broadcastBytes(void *data, size_t bytes, int root) = 0;
};

/// Elements from the first tensor's start to the last one's end when each
/// tensor starts after the previous one's end within an alignment gap (a
/// bucket the planner packed): one collective then covers the bucket, its
/// padding summed too, harmlessly. 0 when they are not packed.
inline int64_t packedElements(const std::vector<TensorRef> &tensors) {
  if (tensors.empty())
    return 0;
  size_t element = dtypeSize(tensors.front().dtype);
  for (size_t i = 1; i < tensors.size(); ++i) {
    auto *end = static_cast<char *>(tensors[i - 1].data) + tensors[i - 1].bytes();
    auto *next = static_cast<char *>(tensors[i].data);
    if (next < end || next - end >= 4096 || (next - end) % (ptrdiff_t)element != 0)
      return 0;
  }
  auto *start = static_cast<char *>(tensors.front().data);
  auto *end = static_cast<char *>(tensors.back().data) + tensors.back().bytes();
  return (end - start) / (ptrdiff_t)element;
}

/// One rank: rank 0 of 1; a sum or mean over one rank changes nothing.
std::unique_ptr<Communicator> localCommunicator();

/// Why a step planned for `planned` ranks cannot run with `comm` (null: one
/// rank), or "" when the sizes agree: the all_reduce kernels' check (inline:
/// the CUDA plugin links no more than the runtime core).
inline std::string worldSizeMismatch(int64_t planned, const Communicator *comm) {
  int size = comm ? comm->size() : 1;
  if (planned == size)
    return "";
  return "the plan sums over " + std::to_string(planned) + " ranks; this run has " +
         std::to_string(size) + " (recompile for this world size)";
}

} // namespace ampc::rt

#endif
