// Choosing among a library's candidate algorithms by timing each on the
// step's own operands, at the step's first run (docs/cuda.md, "GEMM tuning").
#ifndef AMPC_RUNTIME_CUDA_TUNING_H
#define AMPC_RUNTIME_CUDA_TUNING_H

#include <cuda_runtime.h>

#include <functional>

namespace ampc::rt::cuda {

/// The index of the fastest of `count` candidates on `stream`: each is
/// launched once (its module loads, its caches fill), then timed over a few
/// launches between two events. `launch(i)` queues candidate i and returns
/// false where it cannot run. Another candidate replaces the first (the
/// library's own choice) only when it is at least 3% faster, so that a near
/// tie keeps the library's choice. 0 where none ran. Waits for the stream.
int fastestCandidate(cudaStream_t stream, int count, const std::function<bool(int)> &launch);

/// Whether `stream` is being captured into a graph (nothing may wait then).
bool capturing(cudaStream_t stream);

} // namespace ampc::rt::cuda

#endif
