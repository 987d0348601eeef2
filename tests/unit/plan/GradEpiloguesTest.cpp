// Backward GEMM epilogues (compiler/plan/GradEpilogues.cpp, the
// matmul_act_grad and matmul_bias_grad kernels, matmul_bias keeping what the
// backward reads): each fused plan against the same graph with the forward
// epilogues only (probes leave the backward unfused), on the CPU reference. The relu gradient and
// the bias gradients keep the bits; the tanh GELU's gradient rounds once where two steps rounded.
// The CUDA kernels (cuBLASLt's DRELU_BGRAD, DGELU_BGRAD, BGRADA) are held to
// the same reference by ampc-backend-check on the plans these tests lower.
#include <map>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/driver/BackendCheck.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

int count(const rt::Plan &plan, rt::Kernel kernel, const std::string &activation = "",
          size_t outputs = 0) {
  int n = 0;
  for (const rt::Step &s : plan.steps)
    n += s.kernel == kernel &&
         (activation.empty() || s.attrs.value("activation", "") == activation) &&
         (outputs == 0 || s.outputs.size() == outputs);
  return n;
}

struct Plans {
  rt::Plan fused, forwardOnly;
};

Plans lowerBothWays(mlir::ModuleOp m) {
  ProbeOptions probes;
  probes.mode = ProbeOptions::Mode::NonFinite;
  return {lowerToPlan(m, test::cudaChoicesOnCpu(false)),
          lowerToPlan(m, test::cudaChoicesOnCpu(false), probes)};
}

/// A tanh-GELU perceptron with a bias on every layer and an MSE loss.
void geluPerceptron(GraphBuilder &b) {
  Tensor x = b.input("x", {8, 16}), target = b.input("target", {8, 16});
  Tensor w1 = b.param("w1", {16, 128}, Init::normal(0.3)),
         b1 = b.param("b1", {128}, Init::normal(0.3));
  Tensor w2 = b.param("w2", {128, 16}, Init::normal(0.3)),
         b2 = b.param("b2", {16}, Init::normal(0.3));
  Tensor h = b.gelu(b.add(b.matmul(x, w1), b1), true);
  b.setLoss(b.mseLoss(b.add(b.matmul(h, w2), b2), target));
}

struct Case {
  const char *model, *level, *dtype;
  std::map<std::string, std::string> sets;
  int reluGrads, geluGrads, biasGrads;
  bool sameBits; // relu and bias gradients only
};

// simplenet and mlp: both relu layers' gradients fuse, the last layer's
// bias gradient joins its weight gradient. BERT (exact GELU): every bias
// gradient joins its layer's weight gradient, through the reshape of
// [batch, seq, hidden] to rows.
const Case kCases[] = {
    {"simplenet", "O1", "f16", {{"batch", "8"}, {"hidden", "128"}}, 2, 0, 1, true},
    {"mlp", "O0", "f16", {{"batch", "4"}}, 2, 0, 1, true},
    {"mlp", "O1", "bf16", {{"batch", "4"}}, 2, 0, 1, true},
    {"mlp", "O2", "f16", {{"batch", "4"}}, 2, 0, 1, true},
    {"bert",
     "O1",
     "f16",
     {{"layers", "1"},
      {"batch", "2"},
      {"seq", "8"},
      {"vocab", "64"},
      {"hidden", "32"},
      {"heads", "2"}},
     0,
     0,
     7,
     true},
    {"gelu", "O1", "f16", {}, 0, 1, 1, false},
};

TEST(GradEpilogues, AgreeWithTheUnfusedBackward) {
  for (const Case &c : kCases) {
    std::string what = std::string(c.model) + " " + c.level + " " + c.dtype;
    mlir::MLIRContext ctx;
    mlir::OwningOpRef<mlir::ModuleOp> m;
    if (std::string(c.model) == "gelu") {
      GraphBuilder b(ctx, "gelu");
      geluPerceptron(b);
      m = b.finish();
      runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
      test::dumpCudaPlan(*m);
    } else {
      m = buildModel(ctx, c.model, c.sets);
    }
    AmpSettings amp;
    amp.level = c.level;
    amp.dtype = c.dtype;
    if (std::string(c.model) != "gelu")
      runTrainingPipeline(*m, amp, TrainSettings{});
    Plans p = lowerBothWays(*m);
    EXPECT_EQ(count(p.fused, rt::Kernel::MatmulActGrad, "relu"), c.reluGrads) << what;
    EXPECT_EQ(count(p.fused, rt::Kernel::MatmulActGrad, "gelu_tanh"), c.geluGrads) << what;
    EXPECT_EQ(count(p.fused, rt::Kernel::MatmulBiasGrad), c.biasGrads) << what;
    EXPECT_EQ(count(p.fused, rt::Kernel::MatmulBias, "", 2), c.reluGrads + c.geluGrads) << what;
    EXPECT_EQ(count(p.forwardOnly, rt::Kernel::MatmulActGrad) + count(p.forwardOnly, rt::Kernel::MatmulBiasGrad), 0)
        << what;
    EXPECT_LT(p.fused.steps.size(),
              p.forwardOnly.steps.size() - count(p.forwardOnly, rt::Kernel::RecordNonFinite))
        << what;
    auto fused = test::fixedRunResults(p.fused, true),
         forward = test::fixedRunResults(p.forwardOnly, true);
    ASSERT_EQ(fused.size(), forward.size()) << what;
    for (const auto &[name, bytes] : forward) {
      if (c.sameBits) {
        EXPECT_EQ(bytes, fused[name]) << what << ": " << name << " (the same bits)";
        continue;
      }
      // Three steps apart, each gradient a rounding away: within 1% of the
      // tensor's scale.
      rt::DType dtype = p.forwardOnly.buffers[p.forwardOnly.find(name)].dtype;
      rt::BufferDiff d = rt::compareBuffer(bytes, fused[name], dtype, rt::Agreement::Accumulated);
      EXPECT_LE(d.maxAbsDiff, 0.01 * d.refMaxAbs + 1e-6)
          << what << ": " << name << " differs by " << d.maxAbsDiff << " of " << d.refMaxAbs;
    }
  }
}

// A relu result whose columns are not a multiple of 128 keeps no mask: its
// gradient stays unfused, and its bias gradient joins the weight gradient.
TEST(GradEpilogues, ReluMasksNeedWholeWordsOf128Columns) {
  for (int64_t hidden : {96, 256}) {
    mlir::MLIRContext ctx;
    GraphBuilder b(ctx, "relu");
    Tensor x = b.input("x", {4, 8}), target = b.input("target", {4, 8});
    Tensor h = b.relu(b.add(b.matmul(x, b.param("w1", {8, hidden}, Init::normal(0.3))),
                            b.param("b1", {hidden}, Init::normal(0.3))));
    Tensor y = b.add(b.matmul(h, b.param("w2", {hidden, 8}, Init::normal(0.3))),
                     b.param("b2", {8}, Init::normal(0.3)));
    b.setLoss(b.mseLoss(y, target));
    auto m = b.finish();
    runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
    test::dumpCudaPlan(*m);
    struct {
      rt::Plan plan;
    } c{lowerToPlan(*m, test::cudaChoicesOnCpu(false))};
    EXPECT_EQ(count(c.plan, rt::Kernel::MatmulActGrad), hidden % 128 == 0 ? 1 : 0) << hidden;
    EXPECT_EQ(count(c.plan, rt::Kernel::MatmulBias, "relu", 2), hidden % 128 == 0 ? 1 : 0) << hidden;
    EXPECT_EQ(count(c.plan, rt::Kernel::MatmulBiasGrad), hidden % 128 == 0 ? 1 : 2) << hidden;
  }
}

// The signatures refuse a mask of the wrong dtype or shape, a GELU input of
// another dtype, an activation the backward cannot take and a bias gradient
// of the wrong length, before anything runs.
TEST(GradEpilogues, MalformedStepsAreRefusedBeforeTheyRun) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {{"batch", "4"}});
  AmpSettings amp;
  amp.level = "O1";
  runTrainingPipeline(*m, amp, TrainSettings{});
  rt::Plan good = lowerToPlan(*m, test::cudaChoicesOnCpu(false));
  EXPECT_NO_THROW(rt::Executor(good, {true, 1}));
  auto stepOf = [&](rt::Plan &plan, rt::Kernel kernel) -> rt::Step & {
    return *std::find_if(plan.steps.begin(), plan.steps.end(),
                         [&](const rt::Step &s) { return s.kernel == kernel; });
  };
  auto refused = [&](const std::function<void(rt::Plan &)> &edit, const std::string &message) {
    test::expectRefused(good, edit, message);
  };
  refused(
      [&](rt::Plan &p) { p.buffers[stepOf(p, rt::Kernel::MatmulBias).outputs[1]].dtype = rt::DType::F32; },
      "must be i32");
  refused([&](rt::Plan &p) { stepOf(p, rt::Kernel::MatmulActGrad).attrs["activation"] = "none"; },
          "activation must be relu or gelu_tanh");
  refused([&](rt::Plan &p) { stepOf(p, rt::Kernel::MatmulActGrad).attrs["activation"] = "gelu_tanh"; },
          "needs the result's dtype");
  refused([&](rt::Plan &p) { stepOf(p, rt::Kernel::MatmulBias).attrs["activation"] = "none"; },
          "only an activation keeps a second result");
  refused([&](rt::Plan &p) { stepOf(p, rt::Kernel::MatmulBiasGrad).attrs["transpose_a"] = false; },
          "contracting dimensions differ");
  refused(
      [&](rt::Plan &p) {
        rt::Step &s = stepOf(p, rt::Kernel::MatmulBiasGrad);
        std::swap(s.outputs[1], stepOf(p, rt::Kernel::MatmulActGrad).outputs[1]);
      },
      "expected");
}

} // namespace
