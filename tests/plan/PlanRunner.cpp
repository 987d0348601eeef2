// ampc-plan-run PLAN [STEPS]: loads a plan and runs it on seeded synthetic
// data, printing the loss. It links only runtime/ (no MLIR): the proof that a
// compiled plan runs without the compiler.
#include <cstdio>
#include <cstdlib>

#include "runtime/Data.h"
#include "runtime/Executor.h"
#include "runtime/Half.h"

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: ampc-plan-run PLAN [STEPS]\n");
    return 1;
  }
  try {
    ampc::rt::Plan plan = ampc::rt::loadPlan(argv[1]);
    int64_t steps = argc > 2 ? std::atoll(argv[2]) : 1;
    ampc::rt::Executor ex(plan, {/*training=*/false, /*seed=*/0});
    ampc::rt::DataFeed feed(plan, "synthetic", false, 0);
    float loss = 0;
    for (int64_t i = 0; i < steps; ++i) {
      feed.fill(ex, i);
      ex.run();
      if (plan.loss >= 0) {
        ampc::rt::TensorRef t = ex.tensor(plan.loss);
        ampc::rt::toF32(t.data, t.dtype, &loss, 1);
      }
    }
    std::printf("%s: %lld steps, %zu kernels, peak %lld bytes\n", plan.name.c_str(),
                (long long)steps, plan.steps.size(), (long long)plan.peakBytes());
    if (plan.loss >= 0)
      std::printf("loss: %.6g\n", loss);
    return 0;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "ampc-plan-run: error: %s: %s\n", argv[1], e.what());
    return 1;
  }
}
