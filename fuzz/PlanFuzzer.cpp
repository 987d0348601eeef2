// Fuzz target: a plan file, loaded, checked against the kernel signatures by
// the executor, and run once when it is small.
#include "fuzz/FuzzUtil.h"
#include "runtime/device/Executor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ampc::rt;
  try {
    Plan plan = planFromJson(ampc::fuzz::text(data, size));
    int64_t elements = 0;
    for (const Buffer &b : plan.buffers)
      elements += numElements(b.shape);
    if (plan.arenaBytes + plan.persistentBytes > (16 << 20) || elements > (1 << 20))
      return 0; // valid, but too big to run in a fuzzing loop
    Executor ex(plan, {/*training=*/true, /*seed=*/1});
    ex.run();
  } catch (const PlanError &) {
  } catch (const RuntimeError &) {
  }
  return 0;
}
