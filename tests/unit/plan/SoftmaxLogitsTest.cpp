// Softmax backward from logits (compiler/plan/SoftmaxLogits.cpp, the
// softmax_backward kernels' from_logits): each fused plan against the same
// graph whose backward reads the softmax's result, on the CPU reference.
// The backward recomputes the probabilities with the softmax's own code,
// so the results are the same bits. The CUDA kernel recomputes them with
// the softmax kernel's RowSoftmax; ampc-backend-check holds it to the CPU
// on every plan these tests lower (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/core/KernelSignatures.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

int fromLogits(const rt::Plan &plan) {
  return std::count_if(plan.steps.begin(), plan.steps.end(), [](const rt::Step &s) {
    return s.kernel == rt::Kernel::SoftmaxLogitsBackward;
  });
}

struct Setting {
  const char *level, *dtype;
  bool recompute;
};

// test::smallBertTraining's scale is no power of two: a recompute that
// scaled or rounded elsewhere would show.
TEST(SoftmaxLogits, AttentionTrainsToTheSameBits) {
  for (Setting s : {Setting{"O1", "f16", true}, Setting{"O1", "bf16", true},
                    Setting{"O2", "f16", true}, Setting{"O1", "f16", false}}) {
    std::string what = std::string(s.level) + " " + s.dtype + (s.recompute ? "" : " kept");
    mlir::MLIRContext ctx;
    auto m = test::smallBertTraining(ctx, s.level, s.dtype, s.recompute);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(true),
                                 test::fusionsWithout(plan::softmaxLogits)),
             fused = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    EXPECT_EQ(fromLogits(steps), 0) << what;
    EXPECT_EQ(fromLogits(fused), 1) << what;
    EXPECT_LE(fused.arenaBytes, steps.arenaBytes) << what;
    test::expectSameResults(steps, fused, true, what);
  }
}

/// A GEMM, a softmax (or log_softmax) of its f16 result along `axis`, and a
/// GEMM of that, trained at O1: the backward recomputes the softmax from
/// the f16 scores (docs/training.md). The plans with and without the fusion.
std::pair<rt::Plan, rt::Plan> plans(int64_t axis, bool log) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "logits");
  Tensor h = b.matmul(b.input("x", {4, 6}), b.param("w1", {6, 8}, Init::normal(0.5)));
  Tensor y = log ? b.logSoftmax(h, axis) : b.softmax(h, axis);
  Tensor out = b.matmul(y, b.param("w2", {8, 3}, Init::normal(0.5)));
  b.setLoss(b.mseLoss(out, b.input("target", {4, 3}), "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = "O1";
  runTrainingPipeline(*m, amp, TrainSettings{});
  test::dumpCudaPlan(*m);
  return {lowerToPlan(*m, test::cudaChoicesOnCpu(true)),
          lowerToPlan(*m, test::cudaChoicesOnCpu(true), test::fusionsWithout(plan::softmaxLogits))};
}

TEST(SoftmaxLogits, OnlyASoftmaxAlongTheLastAxis) {
  // Along the first axis, or of a log_softmax, the backward reads the
  // result, as before; each plan trains to the same bits either way.
  for (int64_t axis : {0, -1})
    for (bool log : {false, true}) {
      auto [fused, steps] = plans(axis, log);
      std::string what = "axis " + std::to_string(axis) + (log ? " log_softmax" : " softmax");
      EXPECT_EQ(fromLogits(fused), axis == -1 && !log ? 1 : 0) << what;
      test::expectSameResults(steps, fused, true, what);
    }
}

TEST(SoftmaxLogits, ABadBackwardIsRefusedBeforeItRuns) {
  rt::Plan fused = plans(-1, false).first;
  ASSERT_EQ(fromLogits(fused), 1);
  auto backward = [](rt::Plan &p) -> rt::Step & {
    return *std::find_if(p.steps.begin(), p.steps.end(),
                         [](const rt::Step &s) { return s.kernel == rt::Kernel::SoftmaxLogitsBackward; });
  };
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).attrs["log"] = true; },
      "a backward from logits is for softmax, not log_softmax");
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).attrs["axis"] = 0; },
      "a backward from logits needs the last axis");
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).attrs["input_round"] = "f64"; }, "input_round");
}

} // namespace
