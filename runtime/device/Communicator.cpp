#include "runtime/device/Communicator.h"

#include "runtime/core/Errors.h"

namespace ampc::rt {
namespace {

class LocalCommunicator : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  void allReduce(const std::vector<TensorRef> &tensors, ReduceOp) override {
    for (const TensorRef &t : tensors)
      if (t.dtype != tensors.front().dtype)
        throw RuntimeError("allreduce: tensors of one call must share a dtype");
  }
  void broadcastBytes(void *, size_t, int) override {}
};

} // namespace

std::unique_ptr<Communicator> localCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

} // namespace ampc::rt
