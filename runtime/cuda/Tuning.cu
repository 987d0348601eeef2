// Timing candidate algorithms: events around a few launches of each, after
// one untimed launch. The minimum of two timed rounds, so that one
// interruption does not decide.
#include <vector>

#include "runtime/cuda/CudaCommon.h"
#include "runtime/cuda/Tuning.h"

namespace ampc::rt::cuda {

namespace {

constexpr int kLaunchesPerRound = 3, kRounds = 2;
constexpr float kMargin = 0.97f; // another candidate must beat the first by 3%

/// Milliseconds per launch of one candidate (its best round), or a negative
/// value where it cannot run.
float timeOf(cudaStream_t stream, cudaEvent_t start, cudaEvent_t stop,
             const std::function<bool()> &launch) {
  if (!launch())
    return -1;
  float best = -1;
  for (int round = 0; round < kRounds; ++round) {
    AMPC_CUDA_CHECK(cudaEventRecord(start, stream));
    for (int i = 0; i < kLaunchesPerRound; ++i)
      if (!launch())
        return -1;
    AMPC_CUDA_CHECK(cudaEventRecord(stop, stream));
    AMPC_CUDA_CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    AMPC_CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    ms /= kLaunchesPerRound;
    if (best < 0 || ms < best)
      best = ms;
  }
  return best;
}

} // namespace

bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  AMPC_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
  return status != cudaStreamCaptureStatusNone;
}

int fastestCandidate(cudaStream_t stream, int count, const std::function<bool(int)> &launch) {
  cudaEvent_t start, stop;
  AMPC_CUDA_CHECK(cudaEventCreate(&start));
  AMPC_CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms(count, -1);
  try {
    for (int i = 0; i < count; ++i)
      ms[i] = timeOf(stream, start, stop, [&] { return launch(i); });
  } catch (...) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    throw;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  int best = -1;
  for (int i = 0; i < count; ++i)
    if (ms[i] >= 0 && (best < 0 || ms[i] < ms[best]))
      best = i;
  if (best < 0 || (ms[0] >= 0 && ms[best] > kMargin * ms[0]))
    return 0;
  return best;
}

} // namespace ampc::rt::cuda
