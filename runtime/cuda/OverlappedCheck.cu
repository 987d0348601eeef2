#include "runtime/cuda/OverlappedCheck.h"

namespace ampc::rt::cuda {

OverlappedCheck::OverlappedCheck(LaunchContext &check, size_t index, std::vector<EarlyCheck> parts)
    : check_(check), index_(index), parts_(std::move(parts)), tables_(parts_.size()),
      forks_(parts_.size()), flag_(check.device.allocate(1, 256)) {
  AMPC_CUDA_CHECK(cudaStreamCreateWithFlags(&side_, cudaStreamNonBlocking));
  for (cudaEvent_t &e : forks_)
    AMPC_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  AMPC_CUDA_CHECK(cudaEventCreateWithFlags(&joined_, cudaEventDisableTiming));
}

OverlappedCheck::~OverlappedCheck() {
  for (cudaEvent_t e : forks_)
    cudaEventDestroy(e);
  cudaEventDestroy(joined_);
  cudaStreamDestroy(side_);
}

void OverlappedCheck::after(size_t step) {
  if (step < index_)
    fork(step);
}

void OverlappedCheck::fork(size_t step) {
  for (; next_ < parts_.size() && parts_[next_].after <= step; ++next_) {
    AMPC_CUDA_CHECK(cudaEventRecord(forks_[next_], check_.stream()));
    AMPC_CUDA_CHECK(cudaStreamWaitEvent(side_, forks_[next_], 0));
    checkFinitePart(check_, parts_[next_].inputs, reinterpret_cast<uint8_t *>(flag_.get()),
                    next_ == 0, tables_[next_], side_);
  }
}

void OverlappedCheck::join() {
  fork(index_);
  AMPC_CUDA_CHECK(cudaEventRecord(joined_, side_));
  AMPC_CUDA_CHECK(cudaStreamWaitEvent(check_.stream(), joined_, 0));
  AMPC_CUDA_CHECK(cudaMemcpyAsync(check_.out.back().data, flag_.get(), 1, cudaMemcpyDeviceToDevice,
                                  check_.stream()));
  next_ = 0;
}

} // namespace ampc::rt::cuda
