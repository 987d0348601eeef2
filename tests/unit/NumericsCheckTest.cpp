// The numerics probes and what reads them: non-finite probes leave every
// other step of the plan as it was, range probes leave the training bit for
// bit as it was, --check-numerics names an input that carries a NaN into
// the run, and the doctor's rows and verdict follow from the ranges.
#include <cmath>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "models/Models.h"
#include "runtime/core/Probes.h"
#include "runtime/driver/Doctor.h"
#include "runtime/driver/Trainer.h"
#include "runtime/numerics/Half.h"
#include "tests/unit/RuntimeTestUtil.h"

using namespace ampc;

namespace {

mlir::OwningOpRef<mlir::ModuleOp> trainingMlp(mlir::MLIRContext &ctx) {
  auto m = buildModel(ctx, "mlp", {{"batch", "8"}, {"hidden", "16"}});
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  return m;
}

std::vector<std::string> stepNames(const rt::Plan &plan) {
  std::vector<std::string> names;
  for (const rt::Step &s : plan.steps)
    if (s.kernel != rt::Kernel::RecordRange && s.kernel != rt::Kernel::RecordNonFinite)
      names.push_back(s.name + ":" + rt::kernelName(s.kernel));
  return names;
}

TEST(NumericsProbes, NonFiniteProbesAddOnlyProbes) {
  mlir::MLIRContext ctx;
  auto m = trainingMlp(ctx);
  rt::Plan plain = lowerToPlan(*m), none = lowerToPlan(*m, rt::cpuTarget(), {});
  rt::Plan probed =
      lowerToPlan(*m, rt::cpuTarget(), ProbeOptions{ProbeOptions::Mode::NonFinite, "f16"});
  EXPECT_EQ(rt::planToJson(plain), rt::planToJson(none)) << "no probes: the same plan";
  EXPECT_LT(plain.find(rt::kNonFiniteFlags), 0);
  EXPECT_EQ(stepNames(probed), stepNames(plain));
  EXPECT_GT(probed.steps.size(), plain.steps.size());
  EXPECT_GE(probed.find(rt::kNonFiniteFlags), 0);
}

TEST(NumericsProbes, RangeProbesTrainBitForBitAsWithout) {
  mlir::MLIRContext ctx;
  auto m = trainingMlp(ctx);
  rt::Plan plain = lowerToPlan(*m);
  rt::Plan probed = lowerToPlan(*m, rt::cpuTarget(), ProbeOptions{ProbeOptions::Mode::Ranges, "f16"});
  std::map<std::string, std::vector<char>> states[2];
  int k = 0;
  for (const rt::Plan *plan : {&plain, &probed}) {
    rt::Executor ex(*plan, {true, 5});
    ex.writeScalar(ex.id("lr"), 0.1);
    for (int step = 0; step < 3; ++step) {
      ex.writeF32(ex.id("x"), std::vector<float>(8 * 784, 0.01f * (step + 1)));
      test::setValues(ex, "labels", {0, 1, 2, 3, 4, 5, 6, 7});
      ex.run();
    }
    states[k++] = test::paramBytes(*plan, ex);
  }
  EXPECT_EQ(states[0], states[1]);
}

/// `module`'s training plan on the CPU with the non-finite probes (L =
/// f16), and `steps` steps of it under --check-numerics.
std::pair<rt::Plan, rt::TrainResult> trainChecked(mlir::ModuleOp module, int64_t steps) {
  rt::Plan plan =
      lowerToPlan(module, rt::cpuTarget(), ProbeOptions{ProbeOptions::Mode::NonFinite, "f16"});
  rt::TrainOptions options;
  options.steps = steps;
  options.checkNumerics = true;
  rt::TrainResult r = rt::Trainer(plan, std::nullopt, options).run();
  return {std::move(plan), std::move(r)};
}

TEST(NumericsCheck, NamesTheInputThatCarriesANaN) {
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "nan");
  Tensor x = b.input("x", {4, 8});
  Tensor t = b.input("t", {4, 8});
  Tensor w = b.param("w", {8, 8}, Init::normal(0.1));
  std::vector<double> bias(32, 0.5);
  bias[5] = NAN;
  Tensor y = b.add(b.matmul(x, w, false, false, "fc"), b.constValue("bias", {4, 8}, bias), "shift");
  b.setLoss(b.mseLoss(y, t, "loss"));
  auto m = b.finish();
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  auto [plan, r] = trainChecked(*m, 2);
  ASSERT_TRUE(r.numerics && r.numerics->first);
  const rt::NonFiniteFinding &f = *r.numerics->first;
  EXPECT_EQ(f.cause, rt::NonFiniteCause::NonFiniteInF32);
  EXPECT_EQ(f.op, "bias.cast_f16"); // the first op that reads it: its cast to f16
  EXPECT_EQ(f.input, "bias");
  EXPECT_FALSE(f.backward);
  EXPECT_EQ(r.numerics->total(), 2);
  EXPECT_EQ(r.skipped, 2);
}

TEST(NumericsCheck, AnAttentionReportsItsScores) {
  // A fused attention whose backward overflows f16 at the first loss scale
  // (large values of v make large score gradients): named as the first op,
  // with the largest |score| it computed in f32, as f64 computes it.
  mlir::MLIRContext ctx;
  GraphBuilder b(ctx, "attention");
  std::vector<int64_t> shape = {1, 16, 1, 64};
  Tensor q = b.param("q", shape, Init::normal(2.0)), k = b.param("k", shape, Init::normal(2.0)),
         v = b.param("v", shape, Init::normal(300.0));
  Tensor y = b.attention(q, k, v, true, std::nullopt, "attn");
  b.setLoss(b.reduceSum(b.mul(b.cast(y, "f32"), b.input("r", shape)), {}, false, "loss"));
  auto m = b.finish();
  AmpSettings amp;
  amp.level = "O1";
  TrainSettings train;
  train.lossScaling = "dynamic";
  train.initLossScaling = 1024;
  runTrainingPipeline(*m, amp, train);
  auto [plan, r] = trainChecked(*m, 1);
  ASSERT_TRUE(r.numerics && r.numerics->first);
  const rt::NonFiniteFinding &f = *r.numerics->first;
  EXPECT_EQ(f.kernel, "attention_backward");
  EXPECT_EQ(f.cause, rt::NonFiniteCause::LossScaleOverflow);
  rt::Executor params(plan); // the Trainer's initial params (seed 0)
  auto asF16 = [](float x) { return num::f16ToF32(num::f32ToF16(x)); };
  std::vector<float> qv = params.readF32(params.id("q")), kv = params.readF32(params.id("k"));
  double want = 0;
  for (int64_t i = 0; i < 16; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      double dot = 0;
      for (int64_t x = 0; x < 64; ++x)
        dot += (double)asF16(qv[i * 64 + x]) * asF16(kv[j * 64 + x]);
      want = std::max(want, std::fabs(dot / 8));
    }
  EXPECT_NEAR(f.scoresMaxAbs, want, 1e-5 * want);
}

TEST(Doctor, RowsAndVerdictFollowTheRanges) {
  rt::Plan plan;
  plan.buffers.resize(3);
  plan.buffers[0] = {0, "h", rt::BufferKind::Temp, rt::DType::F16, {4}};
  plan.buffers[1] = {1, "g", rt::BufferKind::Temp, rt::DType::F16, {4}};
  plan.buffers[2] = {2, rt::kRanges, rt::BufferKind::State, rt::DType::F64, {2, rt::kRangeFields}};
  auto probe = [](const char *of, bool backward, int slot) {
    rt::Step s{std::string(of) + ".range", rt::Kernel::RecordRange, {}, {}, rt::Json::object()};
    s.attrs = {{"of", of}, {"step", of}, {"kernel", "matmul"}, {"backward", backward},
               {"slot", slot}};
    return s;
  };
  plan.steps = {probe("h", false, 0), probe("g", true, 1)};
  std::vector<double> ranges(2 * rt::kRangeFields, 0);
  double *h = ranges.data(), *g = ranges.data() + rt::kRangeFields;
  h[rt::kMaxAbs] = 131008; // twice f16's largest: one power of two over
  h[rt::kElements] = 100;
  h[rt::kNearOverflows] = 40;
  g[rt::kMaxAbs] = 8;
  g[rt::kMaxAbsUnscaled] = 0.25;
  g[rt::kElements] = 100;
  g[rt::kUnderflows] = 10;
  g[rt::kSubnormals] = 30;
  std::vector<rt::ValueRange> values = rt::valueRanges(plan, ranges, "f16");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_NEAR(values[0].headroomLog2, -1.0, 1e-3);
  EXPECT_DOUBLE_EQ(values[0].nearMaxFraction, 0.4);
  EXPECT_TRUE(values[1].backward);
  EXPECT_DOUBLE_EQ(values[1].flushFraction, 0.1);
  EXPECT_DOUBLE_EQ(values[1].subnormalFraction, 0.3);
  rt::DoctorVerdict d = rt::diagnose(values, "f16");
  EXPECT_EQ(d.overflowing, std::vector<std::string>{"h"});
  EXPECT_DOUBLE_EQ(d.maxGradient, 0.25);
  EXPECT_EQ(d.initLossScale, 0) << "no scale from a run whose forward overflows";
  EXPECT_EQ(d.worstUnderflow, "g");
  values[0].maxAbs = 100;
  d = rt::diagnose(values, "f16");
  EXPECT_TRUE(d.overflowing.empty());
  // 0.25 * S <= 65504 / 2: S = 2^16 (2^17 would give 32768 > 32752).
  EXPECT_DOUBLE_EQ(d.initLossScale, 65536);
}

TEST(Doctor, Fp8OperandsAskForAMarginOrBf16) {
  rt::Plan plan;
  plan.buffers.resize(3);
  plan.buffers[0] = {0, "fc.fp8_a", rt::BufferKind::Temp, rt::DType::F8E4M3, {4}};
  plan.buffers[1] = {1, "fc.grad_fp8.0", rt::BufferKind::Temp, rt::DType::F8E5M2, {4}};
  plan.buffers[2] = {2, rt::kRanges, rt::BufferKind::State, rt::DType::F64, {2, rt::kRangeFields}};
  auto probe = [](const char *of, bool backward, int slot) {
    rt::Step s{std::string(of) + ".range", rt::Kernel::RecordRange, {}, {}, rt::Json::object()};
    s.attrs = {{"of", of}, {"step", of}, {"kernel", "fp8_quantize"}, {"backward", backward},
               {"slot", slot}};
    return s;
  };
  plan.steps = {probe("fc.fp8_a", false, 0), probe("fc.grad_fp8.0", true, 1)};
  std::vector<double> ranges(2 * rt::kRangeFields, 0);
  double *a = ranges.data(), *g = ranges.data() + rt::kRangeFields;
  a[rt::kMaxAbs] = 448 * 5; // 2^2.32 over E4M3's largest: a margin of 3
  a[rt::kElements] = 1000;
  a[rt::kNearOverflows] = 20; // saturated: 2%
  g[rt::kMaxAbs] = 57344;
  g[rt::kElements] = 1000;
  g[rt::kUnderflows] = 5; // flushed: 0.5%
  std::vector<rt::ValueRange> values = rt::valueRanges(plan, ranges, "bf16");
  ASSERT_EQ(values.size(), 2u);
  EXPECT_TRUE(values[0].fp8() && values[1].fp8() && !values[0].low());
  EXPECT_NEAR(values[0].headroomLog2, -std::log2(5.0), 1e-9) << "against E4M3's 448";
  EXPECT_EQ(values[1].headroomLog2, 0) << "against E5M2's 57344";
  rt::DoctorVerdict d = rt::diagnose(values, "bf16");
  EXPECT_EQ(d.fp8Margin, 3);
  EXPECT_TRUE(d.fp8Flushing.empty());
  EXPECT_TRUE(d.overflowing.empty()) << "FP8 rows are not bf16 values";
  values[0].nearMaxFraction = 0.005; // a few of the largest clipped: no margin
  values[1].flushFraction = 0.02;
  d = rt::diagnose(values, "bf16");
  EXPECT_EQ(d.fp8Margin, 0);
  EXPECT_EQ(d.fp8Flushing, std::vector<std::string>{"fc.grad_fp8.0"});
}

} // namespace
