// GEMM epilogues (compiler/plan/GemmEpilogues.cpp, the matmul_bias kernel):
// each fused plan against the same graph unfused, on the CPU reference. In
// f32 the fused step computes the same bits; in f16/bf16 it rounds once
// where the unfused steps rounded two or three times, and agrees within the
// matmul's tolerance. The CUDA kernel (cuBLASLt's epilogues) is held to the
// same reference by ampc-backend-check on every plan these tests lower.
#include <map>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/driver/BackendCheck.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

rt::Target epilogueTarget() {
  rt::Target t = rt::cpuTarget();
  t.gemmEpilogues = true;
  return t;
}

int countActivation(const rt::Plan &plan, const std::string &activation) {
  int n = 0;
  for (const rt::Step &s : plan.steps)
    n += s.kernel == rt::Kernel::MatmulBias && s.attrs.value("activation", "") == activation;
  return n;
}

struct Case {
  const char *model, *level;
  std::map<std::string, std::string> sets;
  bool training;
  int relu, none, gelu; // fused steps expected per activation
};

// simplenet's three Linear layers: bias + relu fuse in training too (relu's
// backward reads its output); BERT's exact GELU stays a step of its own.
const Case kCases[] = {
    {"simplenet", "O0", {{"batch", "8"}, {"hidden", "32"}}, false, 2, 1, 0},
    {"simplenet", "O1", {{"batch", "8"}, {"hidden", "32"}}, true, 2, 1, 0},
    {"mlp", "O2", {{"batch", "4"}}, true, 2, 1, 0},
    {"mnist_cnn", "O1", {{"batch", "4"}}, true, 1, 1, 0},
    {"bert",
     "O1",
     {{"layers", "1"},
      {"batch", "2"},
      {"seq", "8"},
      {"vocab", "64"},
      {"hidden", "32"},
      {"heads", "2"}},
     true,
     0,
     -1,
     0},
};

TEST(GemmEpilogues, AgreeWithTheUnfusedSteps) {
  for (const Case &c : kCases) {
    std::string what = std::string(c.model) + " " + c.level;
    mlir::MLIRContext ctx;
    auto m = buildModel(ctx, c.model, c.sets);
    AmpSettings amp;
    amp.level = c.level;
    if (c.training)
      runTrainingPipeline(*m, amp, TrainSettings{});
    else
      runAmpPipeline(*m, amp);
    rt::Plan plain = lowerToPlan(*m), fused = lowerToPlan(*m, epilogueTarget());
    EXPECT_EQ(countActivation(fused, "relu"), c.relu) << what;
    EXPECT_EQ(countActivation(fused, "gelu_tanh"), c.gelu) << what;
    if (c.none >= 0)
      EXPECT_EQ(countActivation(fused, "none"), c.none) << what;
    else
      EXPECT_GT(countActivation(fused, "none"), 0) << what;
    EXPECT_LT(fused.steps.size(), plain.steps.size()) << what;
    auto want = test::fixedRunResults(plain, c.training),
         got = test::fixedRunResults(fused, c.training);
    ASSERT_EQ(want.size(), got.size()) << what;
    for (const auto &[name, bytes] : want) {
      rt::DType dtype = plain.buffers[plain.find(name)].dtype;
      if (std::string(c.level) == "O0") {
        EXPECT_EQ(bytes, got[name]) << what << ": " << name << " (f32: the same bits)";
      }
      rt::BufferDiff d = rt::compareBuffer(bytes, got[name], dtype, rt::Agreement::Accumulated);
      // Forward: the matmul's tolerance. Training: three steps apart, each
      // gradient a rounding away, so within 1% of the tensor's scale.
      bool close = c.training ? d.maxAbsDiff <= 0.01 * d.refMaxAbs + 1e-6 : d.ok();
      EXPECT_TRUE(close) << what << ": " << name << " differs by " << d.maxAbsDiff << " of "
                         << d.refMaxAbs;
    }
  }
}

// The tanh GELU joins the epilogue; the exact (erf) one does not.
TEST(GemmEpilogues, TakeTheTanhGeluOnly) {
  for (bool approximate : {true, false}) {
    test::Compiled c = test::compile(
        [&](GraphBuilder &b) {
          Tensor x = b.input("x", {4, 8});
          Tensor w = b.param("w", {8, 16}, Init::normal(0.3));
          Tensor bias = b.param("bias", {16}, Init::normal(0.3));
          b.output(b.gelu(b.add(b.matmul(x, w), bias), approximate));
        },
        {}, epilogueTarget());
    EXPECT_EQ(countActivation(c.plan, "gelu_tanh"), approximate ? 1 : 0);
    EXPECT_EQ(countActivation(c.plan, "none"), approximate ? 0 : 1);
  }
}

} // namespace
