// Batch norm activations (compiler/plan/NormActivations.cpp, the batch_norm
// kernels' `activation`): each fused plan against the same graph with its
// relus, residual adds and relu backwards as steps, on the CPU reference.
// The fused kernels round where those steps rounded, so the results are the
// same bits. The CUDA kernels compute the same expressions;
// ampc-backend-check holds them to the CPU on every plan these tests lower
// (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/device/Executor.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

int countSteps(const rt::Plan &plan, rt::Kernel kernel, size_t inputs,
               const std::string &activation) {
  return std::count_if(plan.steps.begin(), plan.steps.end(), [&](const rt::Step &s) {
    return s.kernel == kernel && s.inputs.size() == inputs &&
           s.attrs.value("activation", std::string()) == activation;
  });
}

/// A stem and a residual block in `layout`: conv, batch norm, relu; then
/// conv, batch norm, relu, conv, batch norm, the stem's result added, relu;
/// pooled into a linear classifier.
void residualBlock(GraphBuilder &b, const std::string &layout) {
  bool nhwc = layout == "NHWC";
  using Shape = std::vector<int64_t>;
  Tensor x = b.input("x", nhwc ? Shape{2, 5, 5, 3} : Shape{2, 3, 5, 5});
  Tensor labels = b.input("labels", {2}, "i64");
  Conv2dAttrs conv;
  conv.padding = {1, 1};
  conv.layout = layout;
  auto layer = [&](Tensor h, int64_t in, const std::string &name) {
    auto s = b.scope(name);
    Tensor w = b.param("w", nhwc ? Shape{4, 3, 3, in} : Shape{4, in, 3, 3}, Init::normal(0.3));
    return b.batchNorm(b.conv2d(h, w, conv), b.param("scale", {4}, Init::uniform(0.5, 1.5)),
                       b.param("bias", {4}, Init::normal(0.2)),
                       b.param("running_mean", {4}, Init::zeros(), "f32", false),
                       b.param("running_var", {4}, Init::ones(), "f32", false), 1e-5, 0.9, layout);
  };
  Tensor stem = b.relu(layer(x, 3, "stem"));
  Tensor h = b.relu(layer(stem, 4, "conv1"));
  h = b.relu(b.add(layer(h, 4, "conv2"), stem));
  Tensor logits = b.matmul(b.globalAvgPool(h, layout), b.param("fc", {4, 4}, Init::normal(0.5)));
  b.setLoss(b.softmaxCrossEntropy(logits, labels, "loss"));
}

struct Setting {
  const char *layout, *level, *dtype;
};

TEST(NormActivations, AResidualBlockTrainsToTheSameBits) {
  for (Setting s : {Setting{"NHWC", "O0", "f16"}, Setting{"NHWC", "O1", "f16"},
                    Setting{"NHWC", "O1", "bf16"}, Setting{"NCHW", "O1", "f16"}}) {
    std::string what = std::string(s.layout) + " " + s.level + " " + s.dtype;
    mlir::MLIRContext ctx;
    GraphBuilder b(ctx, "block");
    residualBlock(b, s.layout);
    auto m = b.finish();
    AmpSettings amp;
    amp.level = s.level;
    amp.dtype = s.dtype;
    runTrainingPipeline(*m, amp, TrainSettings{});
    test::dumpCudaPlan(*m);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(false)),
             fused = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    // Every norm ends in its relu (the block's last with the residual), and
    // the backward of the relus whose gradient only a norm reads joins it
    // (not the block's last: the shortcut reads its gradient too).
    EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNorm, 5, "relu"), 2) << what;
    EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNorm, 6, "relu"), 1) << what;
    EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNormBackward, 4, "relu"), 2) << what;
    EXPECT_EQ(countSteps(fused, rt::Kernel::Relu, 1, ""), 0) << what;
    EXPECT_EQ(countSteps(steps, rt::Kernel::Relu, 1, ""), 3) << what;
    test::expectSameResults(steps, fused, true, what);
  }
}

TEST(NormActivations, ResNetTrainsToTheSameBits) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "resnet",
                      {{"depth", "50"}, {"batch", "2"}, {"image", "32"}, {"classes", "10"}});
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(false)),
           fused = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
  // ResNet-50: 33 norms end in a relu, 16 more in the residual add and a
  // relu; the relus' backward joins the 33 norms' backward.
  EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNorm, 5, "relu"), 33);
  EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNorm, 6, "relu"), 16);
  EXPECT_EQ(countSteps(fused, rt::Kernel::BatchNormBackward, 4, "relu"), 33);
  EXPECT_EQ(countSteps(fused, rt::Kernel::Relu, 1, ""), 0);
  EXPECT_LE(fused.arenaBytes, steps.arenaBytes);
  test::expectSameResults(steps, fused, true, "resnet50");
}

/// A forward graph's plan with the fusions.
rt::Plan fusedForward(const std::function<void(GraphBuilder &, Tensor)> &build) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "norm");
  auto s = b.scope("bn");
  Tensor x = b.input("x", {2, 3, 3, 4});
  Tensor y =
      b.batchNorm(x, b.param("scale", {4}, Init::ones()), b.param("bias", {4}, Init::zeros()),
                  b.param("running_mean", {4}, Init::zeros(), "f32", false),
                  b.param("running_var", {4}, Init::ones(), "f32", false));
  build(b, y);
  auto m = b.finish();
  test::dumpCudaPlan(*m);
  return lowerToPlan(*m, test::cudaChoicesOnCpu(true));
}

TEST(NormActivations, OnlyAResultNothingElseReadsJoins) {
  // The norm's result is returned too: the relu stays a step.
  rt::Plan returned = fusedForward([](GraphBuilder &b, Tensor y) {
    b.output(b.relu(y));
    b.output(y);
  });
  EXPECT_EQ(countSteps(returned, rt::Kernel::BatchNorm, 5, ""), 1);
  // The sum is read twice: the add and the relu stay (as a chain).
  rt::Plan sumReadTwice = fusedForward([](GraphBuilder &b, Tensor y) {
    Tensor sum = b.add(y, b.input("r", {2, 3, 3, 4}));
    b.output(b.relu(sum));
    b.output(sum);
  });
  EXPECT_EQ(countSteps(sumReadTwice, rt::Kernel::BatchNorm, 5, ""), 1);
  // A residual of another shape (broadcast) does not join.
  rt::Plan broadcast = fusedForward(
      [](GraphBuilder &b, Tensor y) { b.output(b.relu(b.add(y, b.input("r", {4})))); });
  EXPECT_EQ(countSteps(broadcast, rt::Kernel::BatchNorm, 5, ""), 1);
  // Another activation does not join.
  rt::Plan tanh = fusedForward([](GraphBuilder &b, Tensor y) { b.output(b.unary("tanh", y)); });
  EXPECT_EQ(countSteps(tanh, rt::Kernel::BatchNorm, 5, ""), 1);
  // The plain case joins, in eval as in training.
  rt::Plan plain = fusedForward([](GraphBuilder &b, Tensor y) { b.output(b.relu(y)); });
  EXPECT_EQ(countSteps(plain, rt::Kernel::BatchNorm, 5, "relu"), 1);
  EXPECT_EQ(plain.steps.size(), 1u);
}

TEST(NormActivations, MalformedStepsAreRefusedBeforeTheyRun) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "block");
  residualBlock(b, "NHWC");
  auto m = b.finish();
  AmpSettings amp;
  amp.level = "O1";
  runTrainingPipeline(*m, amp, TrainSettings{});
  rt::Plan good = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
  EXPECT_NO_THROW(rt::Executor(good, {true, 1}));
  auto stepWith = [](rt::Plan &plan, rt::Kernel kernel, size_t inputs) -> rt::Step & {
    return *std::find_if(plan.steps.begin(), plan.steps.end(), [&](const rt::Step &s) {
      return s.kernel == kernel && s.inputs.size() == inputs;
    });
  };
  auto refused = [&](const std::function<void(rt::Plan &)> &edit, const std::string &message) {
    test::expectRefused(good, edit, message);
  };
  refused([&](rt::Plan &p) { stepWith(p, rt::Kernel::BatchNorm, 6).attrs["activation"] = "gelu"; },
          "activation must be none or relu");
  refused([&](rt::Plan &p) { stepWith(p, rt::Kernel::BatchNorm, 6).attrs["activation"] = "none"; },
          "only a relu takes a residual or mask operand");
  refused([&](rt::Plan &p) { stepWith(p, rt::Kernel::BatchNormBackward, 4).attrs.erase("activation"); },
          "only a relu takes a residual or mask operand");
  refused(
      [&](rt::Plan &p) {
        rt::Step &s = stepWith(p, rt::Kernel::BatchNormBackward, 3);
        s.attrs["activation"] = "relu";
      },
      "a relu's backward takes the relu's result");
  refused(
      [&](rt::Plan &p) {
        rt::Step &s = stepWith(p, rt::Kernel::BatchNorm, 6);
        s.inputs[5] = s.inputs[1]; // a per-channel vector as the residual
      },
      "is [4], expected [2,5,5,4]");
}

} // namespace
