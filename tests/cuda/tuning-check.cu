// The choice among timed candidates (runtime/cuda/Tuning.h) on the GPU:
// candidates are kernels that spin for set times, so the fastest is known.
// It must pick the fastest, keep the first within the 3% margin, skip
// candidates that cannot run (at once, or on a later launch), and fall back
// to the first where none runs.
// Exit 0: every case chose as expected; 1: one did not; 77 (skipped): no
// CUDA device.
#include <cstdio>
#include <vector>

#include "runtime/cuda/Tuning.h"

namespace {

__global__ void spin(long long ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  while ((long long)(now - start) < ns);
}

struct Case {
  const char *name;
  std::vector<long long> ns; // per candidate; negative: cannot run
  int expected;
  int failsOnLaunch = 0; // > 0: candidate 0 fails on this launch (1-based)
};

int chosen(cudaStream_t stream, const Case &c) {
  int launches = 0;
  return ampc::rt::cuda::fastestCandidate(stream, (int)c.ns.size(), [&](int i) {
    if (i == 0 && c.failsOnLaunch > 0 && ++launches >= c.failsOnLaunch)
      return false;
    if (c.ns[i] < 0)
      return false;
    spin<<<1, 1, 0, stream>>>(c.ns[i]);
    return cudaGetLastError() == cudaSuccess;
  });
}

} // namespace

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: skipped\n");
    return 77;
  }
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess)
    return 1;
  const Case cases[] = {
      {"the fastest wins", {400000, 100000, 200000}, 1},
      {"a near tie keeps the first", {400000, 396000, 800000}, 0},
      {"clearly faster beats the first", {400000, 360000}, 1},
      {"one that cannot run is skipped", {-1, 300000, 150000}, 2},
      {"one that fails on a later launch is skipped", {50000, 300000}, 1, 3},
      {"none runs: the first", {-1, -1}, 0},
  };
  int failures = 0;
  for (const Case &c : cases) {
    int got = chosen(stream, c);
    std::printf("%-48s chose %d (expected %d)\n", c.name, got, c.expected);
    failures += got != c.expected;
  }
  cudaStreamDestroy(stream);
  return failures ? 1 : 0;
}
