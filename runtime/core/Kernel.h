// A plan kernel as a typed identifier: steps, the traits table and the
// backends' registries hold rt::Kernel, and code that treats one kernel
// apart compares identifiers (`s.kernel == Kernel::Add`), never names. The
// name is the plan file's spelling, converted where a plan is read or
// written and where the compiler maps an op to its kernel.
#ifndef AMPC_RUNTIME_CORE_KERNEL_H
#define AMPC_RUNTIME_CORE_KERNEL_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ampc::rt {

enum class Kernel : uint8_t {
#define AMPC_KERNEL(id, name) id,
#include "runtime/core/Kernels.def"
};

constexpr size_t kKernelCount = 0
#define AMPC_KERNEL(id, name) +1
#include "runtime/core/Kernels.def"
    ;

/// The kernel's name in plans ("matmul_bias").
const char *kernelName(Kernel k);
/// The kernel called `name`, or nullopt.
std::optional<Kernel> kernelNamed(std::string_view name);

} // namespace ampc::rt

#endif
