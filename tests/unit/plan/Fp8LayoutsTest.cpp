// FP8 GEMM layouts (compiler/plan/Fp8Layouts.cpp): on a target whose FP8
// GEMMs take the TN layout, every fp8_matmul of a --dtype fp8 training step
// reads its operands as a · bᵀ, through transposed FP8 copies where the
// graph has another layout, and trains to the same bits as the plan
// without them on the CPU reference.
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

TEST(Fp8Layouts, EveryFp8GemmIsTnAndTrainsToTheSameBits) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {{"batch", "16"}, {"hidden", "32"}});
  AmpSettings amp;
  amp.dtype = "fp8";
  TrainSettings train;
  train.optimizer = "adamw";
  runTrainingPipeline(*m, amp, train);
  test::dumpCudaPlan(*m);
  rt::Target tn = rt::cpuTarget();
  tn.fp8GemmsTN = true;
  rt::Plan plain = lowerToPlan(*m), laid = lowerToPlan(*m, tn);
  int gemms = test::countKernel(laid, rt::Kernel::Fp8Matmul);
  ASSERT_EQ(gemms, 5) << "fc1 and fc2 forward, fc2's two backward GEMMs and fc1's weight gradient";
  for (const rt::Step &s : laid.steps)
    if (s.kernel == rt::Kernel::Fp8Matmul) {
      EXPECT_FALSE(s.attrs.value("transpose_a", false)) << s.name;
      EXPECT_TRUE(s.attrs.value("transpose_b", false)) << s.name;
    }
  // The forward's two weights ([K, N]) and the weight gradients' operands
  // (fc1's input and gradient, fc2's): one copy per buffer.
  int copies = test::countKernel(laid, rt::Kernel::Transpose) -
               test::countKernel(plain, rt::Kernel::Transpose);
  EXPECT_EQ(copies, 6);
  for (const rt::Step &s : laid.steps)
    if (s.kernel == rt::Kernel::Transpose && s.name.find(".transpose") != std::string::npos)
      EXPECT_TRUE(rt::isFp8(laid.buffers[s.outputs[0]].dtype)) << s.name;
  test::expectSameResults(plain, laid, true, "fp8 layouts");
}

} // namespace
