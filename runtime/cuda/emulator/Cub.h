// The part of CUB that the CUDA backend uses, on the host (hostify.py puts
// it in place of <cub/...>): DeviceRadixSort::SortPairs, a stable sort of
// (key, value) pairs by the key's bits [beginBit, endBit), as CUB's.
#ifndef AMPC_RUNTIME_CUDA_EMULATOR_CUB_H
#define AMPC_RUNTIME_CUDA_EMULATOR_CUB_H

#include <algorithm>
#include <numeric>
#include <vector>

#include "runtime/cuda/emulator/Emulator.h"

namespace cub {

struct DeviceRadixSort {
  /// Without `temp`, sets `tempBytes` (CUB's size query); else sorts.
  template <typename K, typename V>
  static cudaError_t SortPairs(void *temp, size_t &tempBytes, const K *keysIn, K *keysOut,
                               const V *valuesIn, V *valuesOut, int n, int beginBit = 0,
                               int endBit = int(sizeof(K) * 8), cudaStream_t stream = nullptr) {
    (void)stream;
    if (!temp) {
      tempBytes = 1;
      return cudaSuccess;
    }
    ampc::emu::submit([=] {
      using U = std::make_unsigned_t<K>;
      auto bits = [&](K k) {
        U u = U(k) >> beginBit;
        int width = endBit - beginBit;
        return width >= int(sizeof(U) * 8) ? u : U(u & ((U(1) << width) - 1));
      };
      std::vector<int> order(n);
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int a, int b) { return bits(keysIn[a]) < bits(keysIn[b]); });
      std::vector<K> keys(n);
      std::vector<V> values(n);
      for (int i = 0; i < n; ++i) {
        keys[i] = keysIn[order[i]];
        values[i] = valuesIn[order[i]];
      }
      std::copy(keys.begin(), keys.end(), keysOut);
      std::copy(values.begin(), values.end(), valuesOut);
    });
    return cudaSuccess;
  }
};

} // namespace cub

#endif
