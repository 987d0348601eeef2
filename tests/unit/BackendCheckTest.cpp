// The backend check (runtime/driver/BackendCheck.h): each agreement accepts
// what it allows and no more, the CPU agrees with itself bit for bit, and a
// backend that changes one bit of one kernel's result fails at that step.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "runtime/core/Convert.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/BackendCheck.h"

namespace {

using namespace ampc;
using rt::Agreement;
using rt::DType;

std::vector<std::byte> bytesOf(const std::vector<double> &values, DType dtype) {
  std::vector<std::byte> bytes(values.size() * rt::dtypeSize(dtype));
  for (size_t i = 0; i < values.size(); ++i)
    rt::storeElement(bytes.data(), dtype, i, values[i]);
  return bytes;
}

float ulpsAbove(float x, int n) {
  for (int i = 0; i < n; ++i)
    x = std::nextafter(x, INFINITY);
  return x;
}

rt::BufferDiff compare(const std::vector<double> &ref, const std::vector<double> &got,
                       DType dtype, Agreement agreement) {
  return rt::compareBuffer(bytesOf(ref, dtype), bytesOf(got, dtype), dtype, agreement);
}

TEST(BackendCheck, ExactMeansTheSameBits) {
  EXPECT_EQ(compare({1, 2}, {1, 2}, DType::F32, Agreement::Exact).differing, 0);
  rt::BufferDiff oneUlp = compare({1, 2}, {1, ulpsAbove(2, 1)}, DType::F32, Agreement::Exact);
  EXPECT_EQ(oneUlp.outside, 1);
  EXPECT_EQ(oneUlp.worstIndex, 1);
  EXPECT_EQ(compare({0.0}, {-0.0}, DType::F32, Agreement::Exact).outside, 1) << "-0 is not +0";
  EXPECT_EQ(compare({NAN}, {-NAN}, DType::F32, Agreement::Exact).differing, 0)
      << "any NaN equals any NaN";
  EXPECT_EQ(compare({NAN}, {1}, DType::F32, Agreement::Accumulated).outside, 1);
  EXPECT_EQ(compare({7}, {8}, DType::I64, Agreement::Accumulated).outside, 1)
      << "integers keep their bits under any agreement";
}

TEST(BackendCheck, AnOverflowedStepLeavesZeroTimesInfToTheLibrary) {
  auto diff = [](double ref, double got, Agreement agreement, bool overflowed) {
    return rt::compareBuffer(bytesOf({ref, 1}, DType::F32), bytesOf({got, 1}, DType::F32),
                             DType::F32, agreement, 0, overflowed);
  };
  // A relu gradient's masked element: 0 · inf multiplied (NaN) or selected (0).
  EXPECT_FALSE(diff(NAN, 0, Agreement::Accumulated, false).ok());
  EXPECT_TRUE(diff(NAN, 0, Agreement::Accumulated, true).ok());
  EXPECT_TRUE(diff(INFINITY, NAN, Agreement::Attention, true).ok());
  EXPECT_EQ(diff(NAN, 0, Agreement::Accumulated, true).differing, 1) << "still counted";
  // Finite values keep their tolerance; elementwise results keep IEEE's.
  EXPECT_FALSE(diff(2, 3, Agreement::Accumulated, true).ok());
  EXPECT_FALSE(diff(NAN, 0, Agreement::Rounded, true).ok());
  EXPECT_FALSE(diff(NAN, 0, Agreement::Exact, true).ok());
}

TEST(BackendCheck, RoundedAllowsAFewUlpsPerElement) {
  EXPECT_TRUE(compare({1, 3}, {ulpsAbove(1, 8), 3}, DType::F32, Agreement::Rounded).ok());
  EXPECT_FALSE(compare({1, 3}, {ulpsAbove(1, 64), 3}, DType::F32, Agreement::Rounded).ok());
  EXPECT_FALSE(compare({1}, {INFINITY}, DType::F32, Agreement::Rounded).ok());
  // f16: one ulp (the other rounding of a device result), not two.
  double ulp16 = std::ldexp(1.0, -10);
  EXPECT_TRUE(compare({1}, {1 + ulp16}, DType::F16, Agreement::Rounded).ok());
  EXPECT_FALSE(compare({1}, {1 + 2 * ulp16}, DType::F16, Agreement::Rounded).ok());
}

TEST(BackendCheck, AccumulatedScalesWithTheTensor) {
  // A small element of a large tensor may be off by a share of the tensor's
  // scale (a GEMM's sum in another order), which no per-element rule allows.
  EXPECT_TRUE(compare({1000, 0.001}, {1000, 0.051}, DType::F32, Agreement::Accumulated).ok());
  EXPECT_FALSE(compare({1000, 0.001}, {1000, 0.051}, DType::F32, Agreement::Rounded).ok());
  EXPECT_FALSE(compare({1000, 0.001}, {1000.2, 0.001}, DType::F32, Agreement::Accumulated).ok());
}

TEST(BackendCheck, AttentionIsAccumulatedTwiceAsWideInLowPrecision) {
  // The tensor-core attention rounds its probabilities to f16 before the
  // product with V. 24u off an element of 1 in a tensor whose largest is 4
  // lies outside 4u·1 + 4u·4 (accumulated) and within 8u·1 + 8u·4.
  double u = std::ldexp(1.0, -11);
  std::vector<double> ref = {1, 4}, got = {1 + 24 * u, 4};
  EXPECT_FALSE(compare(ref, got, DType::F16, Agreement::Accumulated).ok());
  EXPECT_TRUE(compare(ref, got, DType::F16, Agreement::Attention).ok());
  EXPECT_FALSE(compare(ref, {1 + 48 * u, 4}, DType::F16, Agreement::Attention).ok());
  // f32 as accumulated.
  EXPECT_FALSE(compare({1000, 0.001}, {1000.2, 0.001}, DType::F32, Agreement::Attention).ok());
}

TEST(BackendCheck, ACancellingSumIsJudgedByItsTerms) {
  // Attention's key-bias gradient on an H100: sums of terms near 1e-3
  // that cancel to rounding noise, 1.4e-10 here and 3.5e-10 there.
  std::vector<double> ref = {-1.36424205e-10, 2e-11}, got = {-3.49245965e-10, 1e-11};
  auto diff = [&](double termScale) {
    return rt::compareBuffer(bytesOf(ref, DType::F32), bytesOf(got, DType::F32), DType::F32,
                             Agreement::Accumulated, termScale);
  };
  EXPECT_FALSE(diff(0).ok()) << "the noise's own scale cannot hold it";
  EXPECT_TRUE(diff(1e-3).ok());
  EXPECT_FALSE(diff(1e-6).ok()) << "terms of 1e-6 allow 6e-11, not 2e-10";
}

rt::Plan smallTrainingPlan() {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {{"batch", "4"}, {"hidden", "16"}});
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Target target = rt::cudaTarget();
  // Keep the relu steps (exact) that the tests below flip.
  target.gemmEpilogues = false;
  target.elementwiseChains = false;
  return lowerToPlan(*m, target);
}

// A relu mask's bit may differ only where one side's result is zero.
TEST(BackendCheck, ReluMaskBitsDifferOnlyAtTheEdge) {
  std::vector<double> y(32, 1.0), yEdge = y;
  yEdge[5] = 0.0;
  auto mask = [](uint32_t bits) {
    std::vector<std::byte> m(4);
    std::memcpy(m.data(), &bits, 4);
    return m;
  };
  auto ref = mask(0xffffffffu), flipped = mask(0xffffffdfu); // bit 5 cleared
  EXPECT_TRUE(rt::compareReluMask(ref, ref, bytesOf(y, DType::F16), bytesOf(y, DType::F16),
                                  DType::F16).ok());
  rt::BufferDiff edge = rt::compareReluMask(ref, flipped, bytesOf(y, DType::F16),
                                            bytesOf(yEdge, DType::F16), DType::F16);
  EXPECT_TRUE(edge.ok());
  EXPECT_EQ(edge.differing, 1);
  rt::BufferDiff wrong = rt::compareReluMask(ref, flipped, bytesOf(y, DType::F16),
                                             bytesOf(y, DType::F16), DType::F16);
  EXPECT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.worstIndex, 5);
}

TEST(BackendCheck, TheCpuAgreesWithItselfBitForBit) {
  rt::Plan plan = smallTrainingPlan();
  rt::CheckOptions o;
  o.candidate = "cpu";
  std::vector<rt::StepCheck> steps = rt::checkSteps(plan, o);
  ASSERT_EQ(steps.size(), plan.steps.size());
  for (const rt::StepCheck &s : steps)
    EXPECT_TRUE(s.exact()) << s.step;
  rt::RunCheck runs = rt::checkRuns(plan, o);
  EXPECT_TRUE(runs.ok());
  EXPECT_TRUE(runs.stepwiseMatches);
  EXPECT_EQ(runs.reference.size(), 4u);
  EXPECT_EQ(runs.reference, runs.replayed);
  // Params one ulp away move this small MLP's losses by far less than the
  // tolerance, which stays 1%, and skip no other step.
  EXPECT_LT(runs.referenceSpread, 1e-4);
  EXPECT_EQ(runs.lossAllowance(), rt::kRunLossTolerance);
  EXPECT_TRUE(runs.bookkeepingSteady);
}

// A whole run's losses may differ by 1%, or by 4 times what the reference's
// own differ by from params one ulp away where that is more (a plan that
// amplifies rounding): a difference beyond it fails. Likewise the skipped
// steps must be the reference's unless its own move with that nudge.
TEST(BackendCheck, TheLossAllowanceFollowsTheReferencesOwnSpread) {
  EXPECT_EQ(rt::runLossAllowance(0), rt::kRunLossTolerance);
  EXPECT_EQ(rt::runLossAllowance(1e-3), rt::kRunLossTolerance);
  EXPECT_DOUBLE_EQ(rt::runLossAllowance(0.018), 0.072);
  rt::RunCheck runs;
  runs.stepwiseMatches = runs.replayMatches = runs.deterministic = runs.bookkeepingMatches = true;
  runs.maxLossRelDiff = 0.0167; // ResNet-18's on an H200
  runs.referenceSpread = 1e-4;
  EXPECT_FALSE(runs.ok());
  runs.referenceSpread = 0.018; // ResNet-18's own spread
  EXPECT_TRUE(runs.ok());
  runs.maxLossRelDiff = 0.08;
  EXPECT_FALSE(runs.ok());
  // Another skipped step fails, unless the reference's own skips move with
  // its params one ulp away (a gradient on the edge of overflow).
  runs.maxLossRelDiff = 0;
  runs.bookkeepingMatches = false;
  EXPECT_FALSE(runs.ok());
  runs.bookkeepingSteady = false;
  EXPECT_TRUE(runs.ok());
}

TEST(BackendCheck, AnInjectedInfSkipsTheStepAndHalvesTheScaleAlike) {
  rt::CheckOptions o;
  o.candidate = "cpu";
  o.injectInfAt = 1;
  rt::RunCheck runs = rt::checkRuns(smallTrainingPlan(), o);
  EXPECT_TRUE(runs.ok());
  EXPECT_TRUE(runs.bookkeepingMatches);
  EXPECT_EQ(runs.referenceSkipped, 1);
  EXPECT_EQ(runs.referenceScale, 32768) << "65536 halved once";
  ASSERT_EQ(runs.reference.size(), 4u);
  EXPECT_FALSE(std::isfinite(runs.reference[1]));
}

/// The CPU backend, except that every relu step flips the lowest bit of the
/// first byte of its result: always, or only in whole runs (as a wrong
/// grouped launch would).
class OffByOneBitProgram : public rt::Program {
public:
  OffByOneBitProgram(std::unique_ptr<rt::Program> inner, const rt::Plan &plan,
                     const rt::PlanMemory &memory, bool inRunsOnly)
      : inner_(std::move(inner)), plan_(plan), inRunsOnly_(inRunsOnly) {
    for (const rt::Step &s : plan.steps)
      flipped_.push_back(s.kernel == rt::Kernel::Relu
                             ? static_cast<unsigned char *>(
                                   rt::bufferRef(plan, memory, s.outputs[0]).data)
                             : nullptr);
  }
  void run(const rt::RunFlags &flags) override {
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      if (rt::runsIn(rt::StepAttrs(plan_.steps[i]).phase(), flags))
        runAndFlip(i);
    }
  }
  void runStep(size_t index) override {
    if (inRunsOnly_)
      inner_->runStep(index);
    else
      runAndFlip(index);
  }
  const rt::Profile &profile() const override { return inner_->profile(); }

private:
  void runAndFlip(size_t index) {
    inner_->runStep(index);
    if (flipped_[index])
      *flipped_[index] ^= 1;
  }
  std::unique_ptr<rt::Program> inner_;
  rt::Plan plan_;
  bool inRunsOnly_;
  std::vector<unsigned char *> flipped_;
};

class OffByOneBit : public rt::Backend {
public:
  explicit OffByOneBit(bool inRunsOnly)
      : cpu_(rt::createBackend("cpu")), target_(rt::cpuTarget()), inRunsOnly_(inRunsOnly) {
    target_.name = name();
  }
  std::string name() const override {
    return inRunsOnly_ ? "cpu-off-in-runs" : "cpu-off-by-one-bit";
  }
  const rt::Target &target() const override { return target_; }
  bool accepts(const rt::Target &plan) const override { return plan.name == target_.name; }
  rt::Device &device() override { return cpu_->device(); }
  std::vector<std::string> kernelNames() const override { return cpu_->kernelNames(); }
  std::unique_ptr<rt::Program> prepare(const rt::Plan &plan, const rt::PlanMemory &memory,
                                       const rt::ExecOptions &options) override {
    return std::make_unique<OffByOneBitProgram>(cpu_->prepare(plan, memory, options), plan,
                                                memory, inRunsOnly_);
  }

private:
  std::unique_ptr<rt::Backend> cpu_;
  rt::Target target_;
  bool inRunsOnly_;
};

TEST(BackendCheck, FindsTheStepOfABackendThatChangesOneBit) {
  rt::registerBackend("cpu-off-by-one-bit", [] { return std::make_unique<OffByOneBit>(false); });
  rt::Plan plan = smallTrainingPlan();
  rt::CheckOptions o;
  o.candidate = "cpu-off-by-one-bit";
  int relus = 0;
  for (const rt::StepCheck &s : rt::checkSteps(plan, o)) {
    if (s.kernel != rt::Kernel::Relu) {
      EXPECT_TRUE(s.exact()) << s.step << ": an error travelled to a later step";
      continue;
    }
    ++relus;
    EXPECT_FALSE(s.ok()) << s.step;
    ASSERT_EQ(s.buffers.size(), 2u);
    EXPECT_EQ(s.buffers[1].second.outside, 1) << "one element of the output, nothing else";
    EXPECT_EQ(s.buffers[1].second.worstIndex, 0);
  }
  EXPECT_EQ(relus, 2);
}

TEST(BackendCheck, FindsAProgramThatDiffersFromItsStepsRunOneByOne) {
  rt::registerBackend("cpu-off-in-runs", [] { return std::make_unique<OffByOneBit>(true); });
  rt::Plan plan = smallTrainingPlan();
  rt::CheckOptions o;
  o.candidate = "cpu-off-in-runs";
  for (const rt::StepCheck &s : rt::checkSteps(plan, o))
    EXPECT_TRUE(s.exact()) << s.step;
  rt::RunCheck runs = rt::checkRuns(plan, o);
  EXPECT_FALSE(runs.stepwiseMatches);
  EXPECT_FALSE(runs.ok());
}

} // namespace
