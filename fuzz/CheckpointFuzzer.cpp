// Fuzz target: a safetensors checkpoint, parsed and loaded into a small plan
// (as --resume does), and read as weights (as --init-from does), also in
// Hugging Face's names (--init-layout hf).
#include "fuzz/FuzzUtil.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/Weights.h"

namespace {

const char *kPlan = R"({"format": "ampc.plan", "version": 2, "name": "p",
 "target": {"name": "cpu", "alignment": 64, "fused_casts": true, "in_order_lists": true},
 "arena_bytes": 64, "persistent_bytes": 192, "unshared_bytes": 64, "peak_bytes": 256,
 "buffers": [
  {"id": 0, "name": "x", "kind": "input", "dtype": "f32", "shape": [2], "offset": 0, "bytes": 8},
  {"id": 1, "name": "w", "kind": "param", "dtype": "f32", "shape": [2, 3], "offset": 0, "bytes": 24},
  {"id": 2, "name": "b", "kind": "param", "dtype": "f16", "shape": [3], "offset": 64, "bytes": 6},
  {"id": 3, "name": "embeddings.token.w", "kind": "param", "dtype": "f32", "shape": [4, 2],
   "offset": 128, "bytes": 32}],
 "steps": [], "inputs": [0], "outputs": [], "loss": -1, "iteration": -1, "skipped_steps": -1})";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ampc::rt;
  static Executor ex(planFromJson(kPlan));
  try {
    Safetensors file = parseSafetensors(ampc::fuzz::text(data, size), "fuzz");
    try {
      loadWeights(file, ex, {"w", "b"}, ex.plan());
    } catch (const RuntimeError &) {
    }
    try {
      loadWeights(file, ex, {"embeddings.token.w"}, ex.plan(), WeightLayout::HuggingFace);
    } catch (const RuntimeError &) {
    }
    loadParams(file, ex);
  } catch (const RuntimeError &) {
  }
  return 0;
}
