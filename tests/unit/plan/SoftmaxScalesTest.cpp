// Softmax scales (compiler/plan/SoftmaxScales.cpp, the softmax kernels'
// input_* and output_* attributes): each fused plan against the same graph
// with its scales as steps, on the CPU reference. The fused kernels round
// where the scale steps rounded, so the results are the same bits. The CUDA
// kernels apply the same num::Scale and rounding; ampc-backend-check holds
// them to the CPU on every plan these tests lower (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/device/Executor.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

using test::countKernel;

struct Setting {
  const char *level, *dtype;
};

// test::smallBertTraining's scale 1/sqrt(8) is no power of two, so rounding
// before and after it differ, and a fused kernel that rounds in the wrong
// place shows.
TEST(SoftmaxScales, AttentionTrainsToTheSameBits) {
  for (Setting s :
       {Setting{"O0", "f16"}, Setting{"O1", "f16"}, Setting{"O1", "bf16"}, Setting{"O2", "f16"}}) {
    std::string what = std::string(s.level) + " " + s.dtype;
    mlir::MLIRContext ctx;
    auto m = test::smallBertTraining(ctx, s.level, s.dtype);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(true),
                                 test::fusionsWithout(plan::softmaxScales)),
             fused = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    // The scale before the softmax (read by it, and with f16 by its
    // recompute in the backward) and the one after its backward both go.
    EXPECT_EQ(countKernel(steps, rt::Kernel::Scale), 2) << what;
    EXPECT_EQ(countKernel(fused, rt::Kernel::Scale), 0) << what;
    int scaled = std::count_if(fused.steps.begin(), fused.steps.end(), [](const rt::Step &st) {
      return st.attrs.contains("input_scale") || st.attrs.contains("output_scale");
    });
    EXPECT_EQ(scaled, std::string(s.level) == "O0" ? 2 : 3) << what;
    test::expectSameResults(steps, fused, true, what);
  }
}

/// A forward graph's plans with and without the fusion.
std::pair<rt::Plan, rt::Plan> forwardPlans(const std::function<void(GraphBuilder &)> &build) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "scales");
  build(b);
  auto m = b.finish();
  test::dumpCudaPlan(*m);
  return {lowerToPlan(*m, test::cudaChoicesOnCpu(true)),
          lowerToPlan(*m, test::cudaChoicesOnCpu(true), test::fusionsWithout(plan::softmaxScales))};
}

TEST(SoftmaxScales, AnAffineScaleJoinsEverySoftmaxAxis) {
  // A scale with a bias, in f16, before softmaxes over the last and the
  // first axis, and a log_softmax: one fused step each, the same bits.
  auto [fused, steps] = forwardPlans([](GraphBuilder &b) {
    Tensor x = b.cast(b.input("x", {6, 5}), "f16");
    Tensor y = b.scale(x, 3.7, -1.25);
    b.output(b.softmax(y, -1));
    b.output(b.softmax(y, 0));
    b.output(b.logSoftmax(y, -1));
  });
  EXPECT_EQ(countKernel(fused, rt::Kernel::Scale), 0);
  EXPECT_EQ(countKernel(steps, rt::Kernel::Scale), 1);
  EXPECT_EQ(test::fixedRunResults(fused, false), test::fixedRunResults(steps, false));
}

TEST(SoftmaxScales, AScaleAnotherStepReadsStays) {
  auto [fused, steps] = forwardPlans([](GraphBuilder &b) {
    Tensor y = b.scale(b.input("x", {4, 4}), 0.5);
    b.output(b.softmax(y));
    b.output(b.unary("exp", y));
  });
  EXPECT_EQ(countKernel(fused, rt::Kernel::Scale), 1);
  auto [returned, unused] = forwardPlans([](GraphBuilder &b) {
    Tensor y = b.scale(b.input("x", {4, 4}), 0.5);
    b.output(b.softmax(y));
    b.output(y);
  });
  EXPECT_EQ(countKernel(returned, rt::Kernel::Scale), 1);
}

TEST(SoftmaxScales, ABadRoundingIsRefusedBeforeItRuns) {
  auto [fused, steps] = forwardPlans([](GraphBuilder &b) {
    b.output(b.softmax(b.scale(b.input("x", {4, 4}), 0.5)));
  });
  rt::Plan bad = fused;
  for (rt::Step &s : bad.steps)
    if (s.kernel == rt::Kernel::Softmax)
      s.attrs["input_round"] = "i32";
  try {
    rt::Executor ex(bad, {false, 1});
    ADD_FAILURE() << "accepted";
  } catch (const rt::PlanError &e) {
    EXPECT_NE(std::string(e.what()).find("attribute 'input_round' must be f16, bf16, f32"),
              std::string::npos)
        << e.what();
  }
}

} // namespace
