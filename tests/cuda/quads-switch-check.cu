// AMPC_CUDA_QUADS=0 turns every vectorised path of the CUDA kernels off, the
// one switch scripts/gpu-check.sh relies on to tell a fault of theirs from
// another (docs/cuda.md): quads (Quads.h), four columns a lane (Columns.h)
// and four-wide held rows (VectorRows.h). Walked on the host (no GPU needed):
// `quads-switch-check off` runs with AMPC_CUDA_QUADS=0 and expects aligned
// float operands to be refused by each; `on` runs without it and expects
// them taken. Exit 0: as expected; 1: not (each fault named).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "runtime/cuda/kernels/Columns.h"
#include "runtime/cuda/kernels/VectorRows.h"

using namespace ampc::rt;
using namespace ampc::rt::cuda;

namespace {

alignas(16) float f32Data[1024];
alignas(16) uint16_t f16Data[1024];

View view(void *data, DType dtype) {
  View v{};
  v.data = data;
  v.dtype = dtype;
  v.rank = 1;
  v.size = v.shape[0] = 768;
  return v;
}

} // namespace

int main(int argc, char **argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  const char *env = std::getenv("AMPC_CUDA_QUADS");
  if ((mode != "on" && mode != "off") || (mode == "off") != (env && std::string(env) == "0")) {
    std::printf("usage: AMPC_CUDA_QUADS=0 quads-switch-check off | quads-switch-check on\n");
    return 1;
  }
  bool on = mode == "on";
  View x = view(f32Data, DType::F32), y = view(f16Data, DType::F16);
  int faults = 0;
  auto expect = [&](bool taken, const char *what) {
    if (taken != on) {
      std::printf("AMPC_CUDA_QUADS %s: %s %s\n", on ? "unset" : "0", what,
                  taken ? "still vectorised" : "not vectorised");
      ++faults;
    }
  };
  expect(quadAligned(x.data, x.dtype), "Quads.h quadAligned (f32)");
  expect(quadsFit({x, y}), "Quads.h quadsFit (f32 and f16)");
  expect(rows::columnsPerLane(768, {x, y}) == kQuad, "Columns.h columnsPerLane");
  expect(rows::vectorRows(768, {x, y}), "VectorRows.h vectorRows");
  // Misaligned operands are never vectorised.
  View shifted = view(f32Data + 1, DType::F32);
  if (quadsFit({shifted}) || rows::vectorRows(768, {shifted})) {
    std::printf("a misaligned operand was vectorised\n");
    ++faults;
  }
  std::printf("AMPC_CUDA_QUADS %s: %s\n", on ? "unset" : "0",
              faults ? "FAILED" : on ? "every path vectorised" : "every path off");
  return faults ? 1 : 0;
}
