// The plan's finite check in parts on a second stream (runtime/core/
// EarlyChecks.h; docs/cuda.md, "Overlapped checks"). Each part forks from the
// main stream once the steps that write its gradients are queued, and runs
// beside the rest of the backward, setting a flag of its own: found_inf's
// memory may still hold another buffer then. In the check's place the main
// stream waits for every part and copies the flag into found_inf, before
// anything reads it. Inside a capture the fork and the join are the graph's
// edges.
#ifndef AMPC_RUNTIME_CUDA_OVERLAPPEDCHECK_H
#define AMPC_RUNTIME_CUDA_OVERLAPPEDCHECK_H

#include <vector>

#include "runtime/core/EarlyChecks.h"
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {

class OverlappedCheck {
public:
  /// `check`: the context of the plan's `check_finite` step `index`, split
  /// into `parts` (at least two).
  OverlappedCheck(LaunchContext &check, size_t index, std::vector<EarlyCheck> parts);
  ~OverlappedCheck();
  OverlappedCheck(const OverlappedCheck &) = delete;
  OverlappedCheck &operator=(const OverlappedCheck &) = delete;

  size_t index() const { return index_; }
  /// Once the steps up to `step` are queued: forks the parts final by then
  /// (none at or after the check's place).
  void after(size_t step);
  /// In the check's place: forks what is left, then the main stream waits
  /// for every part.
  void join();

private:
  void fork(size_t step);

  LaunchContext &check_;
  size_t index_;
  std::vector<EarlyCheck> parts_;
  std::vector<DeviceMemory> tables_; // each part's gradient list
  std::vector<cudaEvent_t> forks_;
  DeviceMemory flag_; // the parts' found_inf, copied into the step's at the join
  cudaEvent_t joined_ = nullptr;
  cudaStream_t side_ = nullptr;
  size_t next_ = 0; // the next part to fork in this run
};

} // namespace ampc::rt::cuda

#endif
