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

enum class ReduceOp { Sum, Average };

class Communicator {
public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Replaces each tensor by its sum (or mean) over all ranks, in place. All
  /// tensors of one call share a dtype; every rank passes the same shapes.
  virtual void allReduce(const std::vector<TensorRef> &tensors, ReduceOp op) = 0;
};

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
