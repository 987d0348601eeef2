// The attention's log-sum-exp kept from the forward (compiler/plan/
// AttentionLse.cpp): a tiny GPT's plans with and without the pass, on the
// CPU reference. The forward sums each row in the order the backward's own
// recomputation did, so training ends in the same bits; the CUDA plans go
// to ampc-backend-check on a GPU (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/GraphBuilder.h"
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

TEST(AttentionLse, ARecomputedCastOfTheSameParamCounts) {
  // q, k and v are a param's f16 cast, which the backward reads recomputed
  // (a `.recast` buffer); with a key mask and dropout.
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "recast");
  Tensor q = b.param("q", {2, 12, 2, 16}, Init::normal(1.0));
  Tensor mask = b.constValue("mask", {2, 1, 1, 12}, std::vector<double>(24, 0.0));
  Tensor y = b.attention(q, q, q, false, std::nullopt, "y", 0.25, 3, mask);
  b.setLoss(b.reduceMean(y, {}, false, "loss"));
  auto m = b.finish();
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  test::dumpCudaPlan(*m);
  rt::Plan fused = lowerToPlan(*m),
           apart = lowerToPlan(*m, rt::cpuTarget(), test::fusionsWithout(plan::attentionLse));
  int read = 0;
  for (const rt::Step &s : fused.steps)
    read += s.kernel == rt::Kernel::AttentionBackward && s.attrs.value("saved_lse", false);
  EXPECT_EQ(read, 1);
  test::expectSameResults(apart, fused, true, "recast");
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
