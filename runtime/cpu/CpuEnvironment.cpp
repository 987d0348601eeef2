// The CPU runtime's environment (CpuEnvironment.h).
#include "runtime/cpu/CpuEnvironment.h"

#include <cblas.h>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <unistd.h>

namespace ampc::rt {
namespace {

/// Set by applyCpuEnvironment for the program it executes again: the core
/// OpenBLAS had detected, for blasCore().
constexpr const char *kDetectedCore = "AMPC_OPENBLAS_DETECTED";

/// Whether OpenBLAS's core `name` has AVX2 and FMA kernels.
bool hasAvx2Kernels(const char *name) {
  static const char *const cores[] = {"Haswell", "SkylakeX", "CooperLake", "SapphireRapids",
                                      "Zen"};
  for (const char *core : cores)
    if (!strcasecmp(name, core))
      return true;
  return false;
}

} // namespace

const char *blasCoreForCpu() {
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
    return nullptr;
  const char *detected = openblas_get_corename();
  if (!detected || hasAvx2Kernels(detected))
    return nullptr;
  bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return avx512 ? "SkylakeX" : "Haswell";
}

void applyCpuEnvironment(char **argv) {
  bool spin = !std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT");
  const char *core = std::getenv("OPENBLAS_CORETYPE") ? nullptr : blasCoreForCpu();
  if (!spin && !core)
    return;
  if (spin && setenv("GOMP_SPINCOUNT", kDefaultSpinCount, 0) != 0)
    return;
  if (core && (setenv("OPENBLAS_CORETYPE", core, 0) != 0 ||
               setenv(kDetectedCore, openblas_get_corename(), 1) != 0))
    return;
  execv("/proc/self/exe", argv);
  // Not executed again: the libraries keep what they chose.
  if (spin)
    unsetenv("GOMP_SPINCOUNT");
  if (core) {
    unsetenv("OPENBLAS_CORETYPE");
    unsetenv(kDetectedCore);
  }
}

std::string waitPolicy() {
  std::string policy;
  for (const char *name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"})
    if (const char *v = std::getenv(name))
      policy += (policy.empty() ? "" : ", ") + std::string(name) + "=" + v;
  return policy.empty() ? "GOMP_SPINCOUNT=" + std::string(kDefaultSpinCount) + " (ampc's default)"
                        : policy;
}

std::string blasCore() {
  std::string core = openblas_get_corename();
  if (!std::getenv("OPENBLAS_CORETYPE")) {
    const char *fit = blasCoreForCpu();
    return core + " (OpenBLAS's choice" +
           (fit ? std::string("; programs that run plans set OPENBLAS_CORETYPE=") + fit : "") +
           ")";
  }
  const char *detected = std::getenv(kDetectedCore);
  return core + (detected ? " (OPENBLAS_CORETYPE, ampc's choice: OpenBLAS detected " +
                                std::string(detected) + ")"
                          : " (OPENBLAS_CORETYPE)");
}

} // namespace ampc::rt
