// Residual gradients (compiler/plan/ResidualGrads.cpp, layer_norm_backward's
// fourth input): each fused plan against the same graph with the adds as
// steps, on the CPU reference. The backward adds the two gradients and
// rounds the sum as the add stored it, so the results are the same bits.
// ampc-backend-check holds the CUDA kernels (rows held in registers, and
// the sum in a pass of its own for rows that are not) to the CPU on every
// plan these tests lower (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/core/KernelSignatures.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

int joined(const rt::Plan &plan) {
  return std::count_if(plan.steps.begin(), plan.steps.end(), [](const rt::Step &s) {
    return s.kernel == rt::Kernel::LayerNormBackward && s.inputs.size() == 4;
  });
}

// The layer's two norms take their gradient's sum: the attention norm's
// (the FFN's input gradient and the residual's), the FFN norm's (the end of
// the Q, K and V input gradients' chain and the residual's).
TEST(ResidualGrads, BertTrainsToTheSameBits) {
  for (auto [level, dtype] : {std::pair{"O0", "f16"}, std::pair{"O1", "f16"},
                              std::pair{"O1", "bf16"}, std::pair{"O2", "f16"}}) {
    std::string what = std::string(level) + " " + dtype;
    mlir::MLIRContext ctx;
    auto m = test::smallBertTraining(ctx, level, dtype);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(true),
                                 test::fusionsWithout(plan::residualGrads)),
             fused = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    EXPECT_EQ(joined(steps), 0) << what;
    EXPECT_EQ(joined(fused), 2) << what;
    EXPECT_LT(fused.steps.size(), steps.steps.size()) << what;
    EXPECT_LE(fused.arenaBytes, steps.arenaBytes) << what;
    test::expectSameResults(steps, fused, true, what);
  }
}

/// Two layer norms `width` wide with a residual branch between them (a
/// GEMM of the first's result added back to it), trained at O1: the first
/// norm's gradient is the residual's plus the GEMM's input gradient, an f32
/// and an f16 tensor. The plans with and without the fusion.
std::pair<rt::Plan, rt::Plan> plans(int64_t width) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "residual");
  auto norm = [&](Tensor x, const std::string &name) {
    return b.layerNorm(x, b.param(name + ".scale", {width}, Init::normal(1.0)),
                       b.param(name + ".bias", {width}, Init::normal(0.5)));
  };
  Tensor h = norm(b.input("x", {5, width}), "n1");
  Tensor y = b.add(h, b.matmul(h, b.param("w", {width, width}, Init::normal(0.5))));
  Tensor out = b.matmul(norm(y, "n2"), b.param("w2", {width, 3}, Init::normal(0.5)));
  b.setLoss(b.mseLoss(out, b.input("target", {5, 3}), "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = "O1";
  runTrainingPipeline(*m, amp, TrainSettings{});
  test::dumpCudaPlan(*m);
  return {lowerToPlan(*m, test::cudaChoicesOnCpu(true)),
          lowerToPlan(*m, test::cudaChoicesOnCpu(true), test::fusionsWithout(plan::residualGrads))};
}

// The plans of the CUDA kernel's two paths, held to the unfused plan on the
// CPU reference: 8 wide, the CUDA kernel holds the rows 4 elements a load
// and adds as it reads; 6 wide, it sums the gradients in a pass of its own
// first. The CPU runs one path for both; ampc-backend-check holds each CUDA
// path to it on these plans (test::dumpCudaPlan).
TEST(ResidualGrads, BothCudaRowWidthsTrainToTheSameBits) {
  for (int64_t width : {8, 6}) {
    auto [fused, steps] = plans(width);
    std::string what = std::to_string(width) + " wide";
    EXPECT_EQ(joined(fused), 1) << what;
    const rt::Step &back = *std::find_if(fused.steps.begin(), fused.steps.end(), [](auto &s) {
      return s.kernel == rt::Kernel::LayerNormBackward && s.inputs.size() == 4;
    });
    EXPECT_EQ(back.attrs.value(rt::attr::kDyDtype, std::string()), "f32") << what;
    EXPECT_NE(fused.buffers[back.inputs[1]].dtype, fused.buffers[back.inputs[3]].dtype) << what;
    test::expectSameResults(steps, fused, true, what);
  }
}

TEST(ResidualGrads, ABadBackwardIsRefusedBeforeItRuns) {
  rt::Plan fused = plans(8).first;
  ASSERT_EQ(joined(fused), 1);
  auto backward = [](rt::Plan &p) -> rt::Step & {
    return *std::find_if(p.steps.begin(), p.steps.end(), [](const rt::Step &s) {
      return s.kernel == rt::Kernel::LayerNormBackward && s.inputs.size() == 4;
    });
  };
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).attrs[rt::attr::kDyDtype] = "i32"; },
      "dy_dtype must be f32, f16 or bf16");
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).attrs.erase(rt::attr::kDyDtype); },
      "dy_dtype must be f32, f16 or bf16");
  test::expectRefused(
      fused, [&](rt::Plan &p) { backward(p).inputs[3] = p.find("w"); }, "'w' is");
}

} // namespace
