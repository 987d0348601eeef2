// Elementwise chains (compiler/plan/ElementwiseChains.cpp, the elementwise_chain
// kernel): each plan with chains against the same graph with its ops as
// steps, on the CPU reference. A chain rounds each value it keeps to the
// dtype of the tensor it replaced, so the results are the same bits. The
// CUDA kernel runs the same num::evalChain; ampc-backend-check holds it to
// the CPU on every plan these tests lower (scripts/gpu-check.sh).
#include <algorithm>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/device/Executor.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

using test::countKernel;

/// The steps from the first matmul to the next one, exclusive.
std::vector<std::string> betweenGemms(const rt::Plan &plan) {
  std::vector<std::string> kernels;
  bool inside = false;
  for (const rt::Step &s : plan.steps) {
    bool gemm = s.kernel == rt::Kernel::Matmul || s.kernel == rt::Kernel::MatmulBias;
    if (gemm && inside)
      return kernels;
    inside |= gemm;
    if (inside && !gemm)
      kernels.push_back(rt::kernelName(s.kernel));
  }
  return {};
}

/// Two GEMMs with a hand-written chain between them: a per-column scale,
/// the exact GELU, an affine scale and a shift; MSE against a target.
void handWritten(GraphBuilder &b) {
  Tensor x = b.input("x", {8, 16}), target = b.input("target", {8, 4});
  Tensor h = b.matmul(x, b.param("w1", {16, 32}, Init::normal(0.3)));
  h = b.mul(h, b.param("gain", {32}, Init::uniform(0.5, 1.5)));
  h = b.gelu(h);
  h = b.scale(h, 0.75, 0.125);
  h = b.sub(h, b.param("shift", {32}, Init::normal(0.1)));
  Tensor y = b.matmul(h, b.param("w2", {32, 4}, Init::normal(0.3)));
  b.setLoss(b.mseLoss(y, target, "loss"));
}

struct Setting {
  const char *level, *dtype;
};

TEST(ElementwiseChains, AHandWrittenChainRunsAsOneStepWithTheSameBits) {
  for (Setting s :
       {Setting{"O0", "f16"}, Setting{"O1", "f16"}, Setting{"O1", "bf16"}, Setting{"O2", "f16"}}) {
    std::string what = std::string(s.level) + " " + s.dtype;
    mlir::MLIRContext ctx;
    GraphBuilder b(ctx, "chain");
    handWritten(b);
    auto m = b.finish();
    test::dumpCudaPlan(*m);
    AmpSettings amp;
    amp.level = s.level;
    amp.dtype = s.dtype;
    runTrainingPipeline(*m, amp, TrainSettings{});
    test::dumpCudaPlan(*m);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(false)),
             chains = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    // The forward between the GEMMs is one kernel; the backward's
    // generated ops (GELU's derivative, the scales) chain too.
    EXPECT_EQ(betweenGemms(chains), std::vector<std::string>{"elementwise_chain"}) << what;
    EXPECT_GE(countKernel(chains, rt::Kernel::ElementwiseChain), 2) << what;
    EXPECT_LT(chains.steps.size(), steps.steps.size()) << what;
    EXPECT_LE(chains.arenaBytes, steps.arenaBytes) << what;
    test::expectSameResults(steps, chains, true, what);
  }
}

struct ModelCase {
  const char *model, *level, *dtype;
  std::map<std::string, std::string> sets;
  bool chains; // some chain forms
};

const ModelCase kModels[] = {
    {"bert",
     "O1",
     "f16",
     {{"layers", "1"},
      {"batch", "2"},
      {"seq", "8"},
      {"vocab", "64"},
      {"hidden", "32"},
      {"heads", "2"}},
     true},
    {"mlp", "O2", "bf16", {{"batch", "4"}}, false},
    {"mnist_cnn", "O1", "f16", {{"batch", "4"}}, false},
};

TEST(ElementwiseChains, ModelsTrainToTheSameBits) {
  for (const ModelCase &c : kModels) {
    std::string what = std::string(c.model) + " " + c.level + " " + c.dtype;
    mlir::MLIRContext ctx;
    auto m = buildModel(ctx, c.model, c.sets);
    AmpSettings amp;
    amp.level = c.level;
    amp.dtype = c.dtype;
    TrainSettings train;
    train.optimizer = "adam";
    runTrainingPipeline(*m, amp, train);
    rt::Plan steps = lowerToPlan(*m, test::cudaChoicesOnCpu(false)),
             chains = lowerToPlan(*m, test::cudaChoicesOnCpu(true));
    EXPECT_EQ(countKernel(chains, rt::Kernel::ElementwiseChain) > 0, c.chains) << what;
    test::expectSameResults(steps, chains, true, what);
  }
}

/// A forward graph's plans with chains, and with its ops as steps.
struct Plans {
  rt::Plan chains, steps;
  /// Whether both compute the same bits.
  bool agree() const {
    return test::fixedRunResults(chains, false) == test::fixedRunResults(steps, false);
  }
};

Plans forwardPlans(const std::function<void(GraphBuilder &)> &build) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "chain");
  build(b);
  auto m = b.finish();
  test::dumpCudaPlan(*m);
  return {lowerToPlan(*m, test::cudaChoicesOnCpu(true)),
          lowerToPlan(*m, test::cudaChoicesOnCpu(false))};
}

TEST(ElementwiseChains, StoreWhatLaterStepsRead) {
  // tanh's value is read twice by mul, then by a matmul: the chain stores
  // it too. sigmoid's value is read by scale and by the add after it: the
  // chain reads it from its slot. The plan returns the exp: stored as well.
  Plans plans = forwardPlans([](GraphBuilder &b) {
    Tensor t = b.unary("tanh", b.input("x", {4, 4}));
    Tensor e = b.unary("exp", b.mul(t, t));
    Tensor s = b.unary("sigmoid", b.input("y", {4, 4}));
    Tensor sum = b.add(e, b.add(s, b.scale(s, 2.0)));
    b.output(b.matmul(sum, t));
    b.output(e);
  });
  const rt::Plan &shared = plans.chains;
  ASSERT_EQ(countKernel(shared, rt::Kernel::ElementwiseChain), 1);
  const rt::Step &chain = shared.steps[0];
  EXPECT_EQ(chain.kernel, rt::Kernel::ElementwiseChain);
  EXPECT_EQ(chain.attrs["ops"], rt::Json({"sigmoid", "scale", "add", "tanh", "mul", "exp", "add"}));
  std::vector<std::string> stored;
  for (int id : chain.outputs)
    stored.push_back(shared.buffers[id].name);
  EXPECT_EQ(stored, (std::vector<std::string>{"add_1", "exp", "tanh"}));
  EXPECT_EQ(chain.attrs["results"], rt::Json({8, 7, 5}));
  EXPECT_TRUE(plans.agree());
  // A value with fewer elements than its reader's result stays a step: the
  // chain would compute it once per element of the larger result.
  Plans broadcast = forwardPlans([](GraphBuilder &b) {
    Tensor row = b.unary("sigmoid", b.input("bias", {4}));
    b.output(b.add(b.input("x", {3, 4}), row));
  });
  EXPECT_EQ(countKernel(broadcast.chains, rt::Kernel::ElementwiseChain), 0);
}

std::vector<std::string> kernelsOf(const rt::Plan &plan) {
  std::vector<std::string> kernels;
  for (const rt::Step &s : plan.steps)
    kernels.push_back(rt::kernelName(s.kernel));
  return kernels;
}

TEST(ElementwiseChains, AConsumerRunsWhereItsProducerRan) {
  // The backward's pattern: a GEMM reads a recomputed GELU before GELU's
  // backward reads it. The backward runs in the GELU's pass instead, which
  // stores the GELU for the GEMM; h is read once, and no more memory is in
  // use at any step (h goes when the chain has read it).
  Plans plans = forwardPlans([](GraphBuilder &b) {
    Tensor h = b.matmul(b.input("x", {8, 16}), b.input("w1", {16, 32}));
    Tensor g = b.gelu(h);
    b.output(b.matmul(g, b.input("w2", {32, 4})));
    b.output(b.mul(h, g));
  });
  EXPECT_EQ(kernelsOf(plans.chains),
            (std::vector<std::string>{"matmul", "elementwise_chain", "matmul"}));
  EXPECT_EQ(kernelsOf(plans.steps), (std::vector<std::string>{"matmul", "gelu", "matmul", "mul"}));
  const rt::Step &chain = plans.chains.steps[1];
  EXPECT_EQ(chain.attrs["ops"], rt::Json({"gelu", "mul"}));
  EXPECT_EQ(chain.outputs.size(), 2u);
  EXPECT_LE(plans.chains.arenaBytes, plans.steps.arenaBytes);
  EXPECT_TRUE(plans.agree());
  // When the consumer's own operand stays alive anyway (an input), running
  // it earlier would only hold its result longer: it stays where it was.
  Plans held = forwardPlans([](GraphBuilder &b) {
    Tensor x = b.input("x", {8, 32});
    Tensor e = b.unary("exp", x);
    b.output(b.matmul(e, b.input("w", {32, 4})));
    b.output(b.mul(e, x));
  });
  EXPECT_EQ(kernelsOf(held.chains), (std::vector<std::string>{"exp", "matmul", "mul"}));
}

TEST(ElementwiseChains, StayWithinTheirBounds) {
  // 20 unary ops: no chain holds more than 16; 10 operands summed: none
  // reads more than 8. Each still computes the ops' bits.
  auto longChain = [](GraphBuilder &b) {
    Tensor t = b.input("x", {2, 3});
    for (int i = 0; i < 20; ++i)
      t = b.scale(t, 1.0 + i / 64.0, i / 32.0);
    b.output(t);
  };
  auto wideChain = [](GraphBuilder &b) {
    Tensor t = b.input("x0", {2, 3});
    for (int i = 1; i < 10; ++i)
      t = b.add(t, b.input("x" + std::to_string(i), {2, 3}));
    b.output(t);
  };
  for (const auto &build : {std::function<void(GraphBuilder &)>(longChain),
                            std::function<void(GraphBuilder &)>(wideChain)}) {
    Plans plans = forwardPlans(build);
    EXPECT_EQ(countKernel(plans.chains, rt::Kernel::ElementwiseChain), 2);
    for (const rt::Step &s : plans.chains.steps) {
      EXPECT_LE(s.inputs.size(), 8u);
      if (s.kernel == rt::Kernel::ElementwiseChain) {
        EXPECT_LE(s.attrs["ops"].size(), 16u);
      }
    }
    EXPECT_TRUE(plans.agree());
  }
}

TEST(ElementwiseChains, MalformedProgramsAreRefusedBeforeTheyRun) {
  rt::Plan good = forwardPlans([](GraphBuilder &b) {
                    b.output(b.unary("tanh", b.add(b.input("x", {4, 4}), b.input("y", {4}))));
                  }).chains;
  ASSERT_EQ(countKernel(good, rt::Kernel::ElementwiseChain), 1);
  size_t at = std::find_if(good.steps.begin(), good.steps.end(),
                           [](const rt::Step &s) { return s.kernel == rt::Kernel::ElementwiseChain; }) -
              good.steps.begin();
  EXPECT_NO_THROW(rt::Executor(good, {}));
  struct Bad {
    const char *attr;
    rt::Json value;
    const char *message;
  };
  const Bad bad[] = {
      {"args", {0, 1, -1, 3, -1, -1}, "bad slot 3"}, // reads its own value
      {"args", {0, 1, -1, 2, 0, -1}, "bad slot 0"},  // a second operand for tanh
      {"args", {0, 9, -1, 2, -1, -1}, "bad slot 9"}, // past every slot
      {"ops", {"add", "cosh"}, "unknown chain op 'cosh'"},
      {"ops", {"add"}, "needs 3 args, a round and 2 params per op"},
      {"rounds", {"", "f8"}, "rounds to 'f8'"},
      {"params", {0, 0, 0}, "needs 3 args"},
      {"ops", "add", "must be a list of strings"},
  };
  for (const Bad &b : bad) {
    rt::Plan plan = good;
    plan.steps[at].attrs[b.attr] = b.value;
    try {
      rt::Executor ex(plan, {});
      ADD_FAILURE() << b.message << ": accepted";
    } catch (const rt::PlanError &e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << e.what();
    }
  }
  rt::Plan tooMany = good;
  rt::Json &attrs = tooMany.steps[at].attrs;
  for (int i = 0; i < 15; ++i) {
    attrs["ops"].push_back("neg");
    for (int k : {2 + i, -1, -1})
      attrs["args"].push_back(k);
    attrs["rounds"].push_back("");
    attrs["params"].push_back(0);
    attrs["params"].push_back(0);
  }
  EXPECT_THROW(rt::Executor(tooMany, {}), rt::PlanError);
}

} // namespace
