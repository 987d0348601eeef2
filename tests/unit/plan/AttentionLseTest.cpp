// The attention's log-sum-exp kept from the forward (compiler/plan/
// AttentionLse.cpp): a tiny GPT's plans with and without the pass, on the
// CPU reference. The forward sums each row in the order the backward's own
// recomputation did, so training ends in the same bits; the CUDA plans go
// to ampc-backend-check on a GPU (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

/// The plan's attention steps that keep their log-sum-exp, and the
/// backward steps that read it.
std::pair<int, int> savedAndRead(const rt::Plan &plan) {
  int saved = 0, read = 0;
  for (const rt::Step &s : plan.steps) {
    saved += s.kernel == rt::Kernel::Attention && s.outputs.size() == 2;
    read += s.kernel == rt::Kernel::AttentionBackward && s.inputs.size() == 6;
  }
  return {saved, read};
}

TEST(AttentionLse, TheBackwardReadsTheForwardsAndTrainsToTheSameBits) {
  for (const char *dtype : {"f16", "bf16"})
    for (bool recompute : {true, false}) {
      std::string what = std::string(dtype) + (recompute ? " recomputed" : " kept");
      mlir::MLIRContext ctx;
      auto m = buildModel(ctx, "gpt2",
                          {{"layers", "2"}, {"hidden", "32"}, {"heads", "2"}, {"seq", "24"},
                           {"vocab", "64"}, {"batch", "2"}});
      AmpSettings amp;
      amp.dtype = dtype;
      TrainSettings train;
      train.optimizer = "adamw";
      train.recompute = recompute;
      runTrainingPipeline(*m, amp, train);
      test::dumpCudaPlan(*m);
      rt::Plan fused = lowerToPlan(*m),
               apart = lowerToPlan(*m, rt::cpuTarget(), test::fusionsWithout(plan::attentionLse));
      EXPECT_EQ(savedAndRead(fused), std::make_pair(2, 2)) << what;
      EXPECT_EQ(savedAndRead(apart), std::make_pair(0, 0)) << what;
      test::expectSameResults(apart, fused, true, what);
    }
}

TEST(AttentionLse, ABadLogSumExpIsRefusedBeforeItRuns) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "gpt2",
                      {{"layers", "1"}, {"hidden", "32"}, {"heads", "2"}, {"seq", "8"},
                       {"vocab", "64"}, {"batch", "1"}});
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Plan plan = lowerToPlan(*m);
  auto lseOf = [](rt::Plan &p) -> rt::Buffer & {
    for (rt::Step &s : p.steps)
      if (s.kernel == rt::Kernel::AttentionBackward && s.inputs.size() == 6)
        return p.buffers[s.inputs[5]];
    throw std::runtime_error("no backward reads a log-sum-exp");
  };
  test::expectRefused(
      plan, [&](rt::Plan &p) { lseOf(p).shape = {1, 8, 3}; }, "is [1,8,3], expected [1,8,2]");
  test::expectRefused(
      plan, [&](rt::Plan &p) { lseOf(p).dtype = rt::DType::F16; }, "the log-sum-exp must be f32");
}

} // namespace
