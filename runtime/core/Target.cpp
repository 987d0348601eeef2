#include "runtime/core/Target.h"

namespace ampc::rt {

const Target &cpuTarget() {
  static const Target t{"cpu", 64, true, true};
  return t;
}

const Target &cudaTarget() {
  static const Target t{"cuda",        256,  false, false, true, true, /*maxAttentionHeadDim=*/256,
                        /*fp8GemmsTN=*/true};
  return t;
}

const Target *findTarget(const std::string &name) {
  for (const Target *t : {&cpuTarget(), &cudaTarget()})
    if (t->name == name)
      return t;
  return nullptr;
}

} // namespace ampc::rt
