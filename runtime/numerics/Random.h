// Counter-based random bits for dropout: SplitMix64's finaliser over (run
// seed, op seed, iteration, element index). Any element of any step can be
// drawn on its own, in any order, on any device, and gives the same bits, so
// a dropout backward regenerates its forward's mask and the CPU and the GPU
// drop the same elements. Host and device code.
#ifndef AMPC_RUNTIME_NUMERICS_RANDOM_H
#define AMPC_RUNTIME_NUMERICS_RANDOM_H

#include "runtime/numerics/HostDevice.h"

namespace ampc::num {

AMPC_HD uint64_t mix(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The stream of one dropout op in one run of the step.
AMPC_HD uint64_t dropoutStream(uint64_t runSeed, uint64_t opSeed, uint64_t iteration) {
  return mix(mix(runSeed ^ opSeed) ^ iteration);
}

/// A uniform double in [0, 1) for element `i` of a stream (53 random bits).
AMPC_HD double uniformAt(uint64_t stream, uint64_t i) {
  return (mix(stream + i) >> 11) * 0x1.0p-53;
}

/// Dropout of one element: dropped with probability `rate`, else scaled by
/// `keep` = 1 / (1 - rate).
AMPC_HD float dropoutAt(float x, uint64_t stream, uint64_t i, double rate, float keep) {
  return uniformAt(stream, i) < rate ? 0.0f : x * keep;
}

} // namespace ampc::num

#endif
