#include "runtime/core/Kernel.h"

#include <unordered_map>

namespace ampc::rt {
namespace {

constexpr const char *kNames[] = {
#define AMPC_KERNEL(id, name) name,
#include "runtime/core/Kernels.def"
};

} // namespace

const char *kernelName(Kernel k) { return kNames[static_cast<size_t>(k)]; }

std::optional<Kernel> kernelNamed(std::string_view name) {
  static const std::unordered_map<std::string_view, Kernel> byName = [] {
    std::unordered_map<std::string_view, Kernel> m;
    for (size_t i = 0; i < kKernelCount; ++i)
      m.emplace(kNames[i], static_cast<Kernel>(i));
    return m;
  }();
  auto it = byName.find(name);
  if (it == byName.end())
    return std::nullopt;
  return it->second;
}

} // namespace ampc::rt
