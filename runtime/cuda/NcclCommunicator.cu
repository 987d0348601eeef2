// GPU ranks over NCCL: the device communicator of a data-parallel run on
// --device cuda. The host communicator (MPI, from mpirun) bootstraps it:
// rank 0 makes the ncclUniqueId and broadcasts it. Collectives are queued on
// the compute stream, so a captured CUDA graph replays them with the step.
// A packed bucket is one ncclAllReduce; f16 and bf16 are summed by NCCL
// (its ring order: every rank gets the same bits, which may differ in the
// last place from the CPU ranks' sums in rank order).
#include <nccl.h>

#include "runtime/core/Errors.h"
#include "runtime/cuda/NcclCommunicator.h"

namespace ampc::rt::cuda {
namespace {

void check(ncclResult_t r, const char *what) {
  if (r != ncclSuccess)
    throw RuntimeError(std::string("NCCL: ") + what + ": " + ncclGetErrorString(r));
}

ncclDataType_t ncclType(DType dtype) {
  switch (dtype) {
  case DType::F32: return ncclFloat32;
  case DType::F16: return ncclFloat16;
  case DType::BF16: return ncclBfloat16;
  case DType::F64: return ncclFloat64;
  default: throw RuntimeError("allreduce: tensors of one call must be floats of one dtype");
  }
}

class NcclCommunicator : public Communicator {
public:
  NcclCommunicator(Communicator &host, cudaStream_t stream)
      : rank_(host.rank()), size_(host.size()), stream_(stream) {
    ncclUniqueId id{};
    if (rank_ == 0)
      check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    host.broadcastBytes(&id, sizeof id, 0);
    check(ncclCommInitRank(&comm_, size_, id, rank_), "ncclCommInitRank");
  }
  ~NcclCommunicator() override { ncclCommDestroy(comm_); }

  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allReduce(const std::vector<TensorRef> &tensors, ReduceOp op) override {
    if (tensors.empty())
      return;
    ncclDataType_t type = ncclType(tensors.front().dtype);
    for (const TensorRef &t : tensors)
      if (t.dtype != tensors.front().dtype)
        throw RuntimeError("allreduce: tensors of one call must be floats of one dtype");
    ncclRedOp_t reduce = op == ReduceOp::Average ? ncclAvg
                         : op == ReduceOp::Max   ? ncclMax
                                                 : ncclSum;
    if (int64_t span = packedElements(tensors)) {
      check(ncclAllReduce(tensors.front().data, tensors.front().data, span, type, reduce, comm_,
                          stream_),
            "ncclAllReduce");
      return;
    }
    check(ncclGroupStart(), "ncclGroupStart");
    for (const TensorRef &t : tensors)
      check(ncclAllReduce(t.data, t.data, t.size(), type, reduce, comm_, stream_),
            "ncclAllReduce");
    check(ncclGroupEnd(), "ncclGroupEnd");
  }

  void broadcastBytes(void *, size_t, int) override {
    throw RuntimeError("the NCCL communicator broadcasts device memory only");
  }

private:
  int rank_, size_;
  cudaStream_t stream_;
  ncclComm_t comm_ = nullptr;
};

} // namespace

std::unique_ptr<Communicator> ncclCommunicator(Communicator &host, cudaStream_t stream) {
  return std::make_unique<NcclCommunicator>(host, stream);
}

} // namespace ampc::rt::cuda
