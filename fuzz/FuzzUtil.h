// What every fuzz target shares: inputs are bounded so that a run stays fast,
// and only the errors a user can cause are caught. Anything else (another
// exception, a crash, a sanitizer report) is a finding.
#ifndef AMPC_FUZZ_FUZZUTIL_H
#define AMPC_FUZZ_FUZZUTIL_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace ampc::fuzz {

constexpr size_t kMaxInput = 1 << 20;

inline std::string text(const uint8_t *data, size_t size) {
  return std::string(reinterpret_cast<const char *>(data), size < kMaxInput ? size : kMaxInput);
}

} // namespace ampc::fuzz

#endif
