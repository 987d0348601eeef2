// all_reduce on the device: a bucket's sums over the ranks of a data-parallel
// run through the run's Communicator, queued on the compute stream (one rank:
// the tensors as they are). Output k holds input k's storage unless input k
// lives on (then it is copied first, on the stream).
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

void allReduce(LaunchContext &c) {
  if (std::string why = worldSizeMismatch(c.attrs.getInt("world_size", 1), c.communicator);
      !why.empty())
    c.fail(why);
  for (size_t k = 0; k < c.out.size(); ++k)
    if (c.out[k].data != c.in[k].data && c.out[k].bytes())
      AMPC_CUDA_CHECK(cudaMemcpyAsync(c.out[k].data, c.in[k].data, c.out[k].bytes(),
                                      cudaMemcpyDeviceToDevice, c.stream()));
  if (c.communicator)
    c.communicator->allReduce(c.out, c.attrs.getStr("reduce", "sum") == "max" ? ReduceOp::Max
                                                                              : ReduceOp::Sum);
}

} // namespace

void addCollectiveKernels(KernelTable &t) { t[Kernel::AllReduce] = allReduce; }

} // namespace ampc::rt::cuda
