// Cast folding (compiler/plan/CastsIntoKernels.cpp): widening casts run inside the
// kernels that read their results, narrowing ones inside the kernels that
// write their operands. Each folded plan against the same graph with its
// casts as steps, on the CPU reference: the same bits, fewer cast steps, no
// more memory. The CUDA kernels read and write the same mixed dtypes through
// the same load/store functors; ampc-backend-check holds them to the CPU on
// every plan these tests lower (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

int countCasts(const rt::Plan &plan) {
  return std::count_if(plan.steps.begin(), plan.steps.end(),
                       [](const rt::Step &s) { return s.kernel == rt::Kernel::Cast; });
}

struct Case {
  const char *model, *level, *dtype;
  std::map<std::string, std::string> sets;
  bool training, folds; // folds: some cast next to a mixed-dtype kernel
  int castsLeft;        // cast steps in the folded plan for the CUDA-like target
};

const std::map<std::string, std::string> kBert = {{"layers", "1"},  {"batch", "2"},
                                                  {"seq", "8"},     {"vocab", "64"},
                                                  {"hidden", "32"}, {"heads", "2"}};

// BERT keeps none of its 22 casts: those whose f32 value another step reads
// too (a layer norm's result that the residual add reads, the gradients of
// two layer norms that an add reads in f32, the recomputed attention
// probabilities that softmax's backward reads in f32) become rounded copies
// their kernels write in the same pass. The mlp's and the CNN's casts are of
// the input and of the logits the graph returns, next to no mixed-dtype
// kernel. simplenet O1 keeps only its input's (which its first weight
// gradient reads too): the MSE loss reads the f16 result and its backward
// writes the f16 gradient.
const Case kCases[] = {
    {"bert", "O1", "f16", kBert, true, true, 0},
    {"bert", "O1", "bf16", kBert, true, true, 0},
    {"bert", "O1", "f16", kBert, false, true, 0},
    {"mlp", "O2", "f16", {{"batch", "4"}}, true, false, 2},
    {"mnist_cnn", "O1", "f16", {{"batch", "4"}}, true, false, 2},
    {"simplenet", "O0", "f16", {{"batch", "8"}, {"hidden", "32"}}, true, false, 0},
    {"simplenet", "O1", "f16", {{"batch", "8"}, {"hidden", "32"}}, true, true, 1},
};

TEST(CastFolding, SameBitsFewerCastsNoMoreMemory) {
  for (const Case &c : kCases)
    for (const rt::Target &target : {rt::cpuTarget(), test::cudaChoicesOnCpu(false)}) {
      std::string what = std::string(c.model) + " " + c.level + " " + c.dtype +
                         (c.training ? " training" : " forward") +
                         (target.fusedCasts ? " (cpu)" : " (cuda-like)");
      mlir::MLIRContext ctx;
      auto m = buildModel(ctx, c.model, c.sets);
      AmpSettings amp;
      amp.level = c.level;
      amp.dtype = c.dtype;
      if (c.training)
        runTrainingPipeline(*m, amp, TrainSettings{});
      else
        runAmpPipeline(*m, amp);
      rt::Plan steps = lowerToPlan(*m, target, test::fusionsWithout(plan::castFolding)),
               folded = lowerToPlan(*m, target);
      if (c.folds) {
        EXPECT_LT(countCasts(folded), countCasts(steps)) << what;
      } else {
        EXPECT_EQ(countCasts(folded), countCasts(steps)) << what;
      }
      if (!target.fusedCasts) {
        EXPECT_EQ(countCasts(folded), c.castsLeft) << what;
      }
      EXPECT_LE(folded.arenaBytes, steps.arenaBytes) << what;
      // Every temporary is some step's operand or the plan's result: the
      // folded-away values take no memory.
      for (const rt::Buffer &b : folded.buffers) {
        bool named = b.kind != rt::BufferKind::Temp ||
                     std::count(folded.outputs.begin(), folded.outputs.end(), b.id) ||
                     std::any_of(folded.steps.begin(), folded.steps.end(), [&](const rt::Step &s) {
                       return std::count(s.inputs.begin(), s.inputs.end(), b.id) ||
                              std::count(s.outputs.begin(), s.outputs.end(), b.id);
                     });
        EXPECT_TRUE(named) << what << ": '" << b.name << "' is named by nothing";
      }
      test::expectSameResults(steps, folded, c.training, what);
    }
}

// A layer norm between two f16 matmuls: it reads the f16 product and
// writes the f16 operand of the next one, and no cast step is left.
TEST(CastFolding, LayerNormReadsAndWritesF16) {
  test::Compiled c = test::compile([](GraphBuilder &b) {
    Tensor x = b.input("x", {4, 8}, "f16");
    Tensor w = b.param("w", {8, 8}, Init::normal(0.3), "f16");
    Tensor h = b.cast(b.matmul(x, w), "f32");
    Tensor scale = b.param("scale", {8}, Init::ones()), bias = b.param("bias", {8}, Init::zeros());
    Tensor n = b.cast(b.layerNorm(h, scale, bias), "f16");
    b.output(b.matmul(n, w));
  });
  EXPECT_EQ(countCasts(c.plan), 0);
  const rt::Step &norm = *std::find_if(c.plan.steps.begin(), c.plan.steps.end(),
                                       [](const rt::Step &s) { return s.kernel == rt::Kernel::LayerNorm; });
  EXPECT_EQ(c.plan.buffers[norm.inputs[0]].dtype, rt::DType::F16);
  EXPECT_EQ(c.plan.buffers[norm.outputs[0]].dtype, rt::DType::F16);
}

// A cast stays where its value has a reader that is no mixed-dtype kernel
// (a matmul); the others fold, the cast of a softmax result the plan
// returns as the softmax's rounded copy. Plans with numerics probes keep
// every cast: a probe names the one that overflowed.
TEST(CastFolding, KeepsCastsItCannotFold) {
  auto build = [](GraphBuilder &b) {
    Tensor x = b.input("x", {4, 8}, "f16");
    Tensor w16 = b.param("w16", {8, 8}, Init::normal(0.3), "f16");
    Tensor w32 = b.param("w32", {8, 8}, Init::normal(0.3));
    Tensor wide = b.cast(x, "f32");
    b.output(b.matmul(wide, w32)); // an f32 matmul reads it: this cast stays
    Tensor s = b.softmax(wide);
    b.output(s); // returned: the softmax writes s and its f16 copy
    b.output(b.matmul(b.cast(s, "f16"), w16));
    Tensor scale = b.param("scale", {8}, Init::ones()), bias = b.param("bias", {8}, Init::zeros());
    b.output(b.matmul(b.cast(b.layerNorm(wide, scale, bias), "f16"), w16)); // folds
  };
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "keeps");
  build(b);
  auto m = b.finish();
  EXPECT_EQ(countCasts(lowerToPlan(*m, rt::cpuTarget(), test::fusionsWithout(plan::castFolding))),
            3);
  rt::Plan folded = lowerToPlan(*m);
  EXPECT_EQ(countCasts(folded), 1);
  auto softmax = std::find_if(folded.steps.begin(), folded.steps.end(),
                              [](const rt::Step &s) { return s.kernel == rt::Kernel::Softmax; });
  ASSERT_NE(softmax, folded.steps.end());
  ASSERT_EQ(softmax->outputs.size(), 2u);
  EXPECT_EQ(folded.buffers[softmax->outputs[0]].dtype, rt::DType::F32);
  EXPECT_EQ(folded.buffers[softmax->outputs[1]].dtype, rt::DType::F16);
  EXPECT_EQ(countCasts(lowerToPlan(*m, rt::cpuTarget(),
                                   ProbeOptions{ProbeOptions::Mode::NonFinite, "f16"})),
            3);
}

} // namespace
