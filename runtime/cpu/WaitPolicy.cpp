// The CPU runtime's default OpenMP wait policy (WaitPolicy.h).
#include "runtime/cpu/WaitPolicy.h"

#include <cstdlib>
#include <unistd.h>

namespace ampc::rt {

void applyWaitPolicy(char **argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT"))
    return;
  if (setenv("GOMP_SPINCOUNT", kDefaultSpinCount, 0) != 0)
    return;
  execv("/proc/self/exe", argv);
  unsetenv("GOMP_SPINCOUNT"); // not executed again: libgomp keeps its default
}

std::string waitPolicy() {
  std::string policy;
  for (const char *name : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT"})
    if (const char *v = std::getenv(name))
      policy += (policy.empty() ? "" : ", ") + std::string(name) + "=" + v;
  return policy.empty() ? "GOMP_SPINCOUNT=" + std::string(kDefaultSpinCount) + " (ampc's default)"
                        : policy;
}

} // namespace ampc::rt
