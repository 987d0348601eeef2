// The NCCL communicator of GPU ranks (NcclCommunicator.cu).
#ifndef AMPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define AMPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include <memory>

#include <cuda_runtime.h>

#include "runtime/device/Communicator.h"

namespace ampc::rt::cuda {

/// Over the ranks of `host`, which bootstraps it; collectives queue on
/// `stream`. Throws RuntimeError with NCCL's message.
std::unique_ptr<Communicator> ncclCommunicator(Communicator &host, cudaStream_t stream);

} // namespace ampc::rt::cuda

#endif
