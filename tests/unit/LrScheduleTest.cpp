// The learning-rate schedules (runtime/numerics/LrSchedule.h) after their
// warmup against Hugging Face's formulas (transformers' optimization.py,
// written out here), and at their edges: past the run's end, a warmup as
// long as the run, a decay longer than what follows the warmup.
#include <cmath>
#include <cstring>

#include <gtest/gtest.h>

#include "runtime/numerics/LrSchedule.h"

using namespace ampc::num;

namespace {

constexpr double kPi = 3.141592653589793;

LrSchedule scheduleOf(ScheduleKind kind, double warmup, double minLr = 0) {
  LrSchedule s;
  s.kind = kind;
  s.warmup = warmup;
  s.minLr = minLr;
  return s;
}

TEST(LrSchedule, EveryNameIsListedAndFound) {
  for (const ScheduleName &n : kScheduleNames) {
    ScheduleKind kind;
    ASSERT_TRUE(scheduleKindOf(n.name, kind)) << n.name;
    EXPECT_EQ(kind, n.kind);
    EXPECT_NE(std::strstr(kScheduleList, n.name), nullptr) << n.name;
  }
  ScheduleKind kind;
  EXPECT_FALSE(scheduleKindOf("cosin", kind));
  EXPECT_FALSE(scheduleKindOf("", kind));
}

TEST(LrSchedule, WarmsUpLinearlyToThePeakThenHoldsItWhenConstant) {
  LrSchedule s = scheduleOf(ScheduleKind::Constant, 4);
  for (int step = 0; step < 4; ++step)
    EXPECT_DOUBLE_EQ(s.at(0.1, step, 10), 0.1 * (step + 1) / 4);
  for (int step = 4; step < 12; ++step)
    EXPECT_DOUBLE_EQ(s.at(0.1, step, 10), 0.1);
  EXPECT_DOUBLE_EQ(scheduleOf(ScheduleKind::Constant, 0).at(0.1, 0, 10), 0.1);
}

TEST(LrSchedule, PolynomialIsHuggingFacesAndLinearAtPowerOne) {
  const double lr = 0.01, end = 1e-4, warmup = 5, total = 40;
  LrSchedule s = scheduleOf(ScheduleKind::Polynomial, warmup, end);
  LrSchedule linear = scheduleOf(ScheduleKind::Linear, warmup, end);
  for (double power : {1.0, 0.5, 2.0}) {
    s.power = power;
    for (int step = 5; step <= 45; ++step) {
      // get_polynomial_decay_schedule_with_warmup(lr_end=end, power=power)
      double hf = step > total ? end
                               : (lr - end) * std::pow(1 - (step - warmup) / (total - warmup),
                                                       power) + end;
      EXPECT_NEAR(s.at(lr, step, total), hf, 1e-15) << "power " << power << " step " << step;
      if (power == 1.0) {
        EXPECT_NEAR(s.at(lr, step, total), linear.at(lr, step, total), 1e-15);
      }
    }
  }
}

TEST(LrSchedule, CosineWithRestartsIsHuggingFacesAndEndsAtTheMinimum) {
  const double lr = 0.01, warmup = 3, total = 33;
  LrSchedule s = scheduleOf(ScheduleKind::CosineWithRestarts, warmup);
  LrSchedule cosine = scheduleOf(ScheduleKind::Cosine, warmup);
  for (int cycles : {1, 3}) {
    s.cycles = cycles;
    for (int step = 3; step <= 40; ++step) {
      // get_cosine_with_hard_restarts_schedule_with_warmup(num_cycles=cycles)
      double progress = (step - warmup) / (total - warmup);
      double hf = progress >= 1 ? 0.0
                                : lr * std::max(0.0, 0.5 * (1 + std::cos(kPi * std::fmod(
                                                                    cycles * progress, 1.0))));
      EXPECT_NEAR(s.at(lr, step, total), hf, 1e-15) << "cycles " << cycles << " step " << step;
      if (cycles == 1 && step < total) {
        EXPECT_NEAR(s.at(lr, step, total), cosine.at(lr, step, total), 1e-15);
      }
    }
  }
  // Each cycle starts at the peak: steps 3, 13 and 23 of 3 cycles over 30.
  for (int start : {3, 13, 23})
    EXPECT_DOUBLE_EQ(s.at(lr, start, total), lr);
  s.minLr = 1e-4;
  EXPECT_DOUBLE_EQ(s.at(lr, total, total), 1e-4);
  EXPECT_DOUBLE_EQ(s.at(lr, total + 7, total), 1e-4);
}

TEST(LrSchedule, InverseSqrtIsHuggingFacesWithOrWithoutAWarmup) {
  const double lr = 0.01;
  for (double warmup : {0.0, 4.0, 100.0}) {
    LrSchedule s = scheduleOf(ScheduleKind::InverseSqrt, warmup);
    double timescale = warmup > 0 ? warmup : 10000;
    for (double step : {warmup, warmup + 1, warmup + 7, 3 * warmup + 50, 1e6}) {
      // get_inverse_sqrt_schedule(num_warmup_steps=warmup)
      double hf = lr / std::sqrt((step + timescale - warmup) / timescale);
      EXPECT_NEAR(s.at(lr, step, 10), hf, 1e-15) << "warmup " << warmup << " step " << step;
    }
  }
  EXPECT_DOUBLE_EQ(scheduleOf(ScheduleKind::InverseSqrt, 4).at(lr, 16, 10), lr / 2);
  EXPECT_DOUBLE_EQ(scheduleOf(ScheduleKind::InverseSqrt, 0).at(lr, 30000, 10), lr / 2);
}

TEST(LrSchedule, WarmupStableDecayHoldsThePeakThenDecaysOverItsLastSteps) {
  const double lr = 0.01, end = 1e-4, total = 40;
  LrSchedule s = scheduleOf(ScheduleKind::WarmupStableDecay, 4, end);
  s.decaySteps = 10;
  for (int step = 4; step <= 30; ++step)
    EXPECT_DOUBLE_EQ(s.at(lr, step, total), lr) << step;
  for (int step = 30; step <= 45; ++step) {
    // get_wsd_schedule(num_stable_steps=26, num_decay_steps=10,
    // min_lr_ratio=end / lr), its cosine decay
    double progress = std::min((step - 30) / 10.0, 1.0), ratio = end / lr;
    double hf = lr * ((0.5 * (1 + std::cos(kPi * progress))) * (1 - ratio) + ratio);
    EXPECT_NEAR(s.at(lr, step, total), hf, 1e-15) << step;
  }
  // A decay longer than what follows the warmup starts after the warmup.
  s.decaySteps = 100;
  EXPECT_DOUBLE_EQ(s.at(lr, 4, total), lr);
  EXPECT_NEAR(s.at(lr, 22, total), LrSchedule::cosineAnneal(lr, end, 0.5), 1e-15);
  EXPECT_DOUBLE_EQ(s.at(lr, total, total), end);
}

TEST(LrSchedule, AWarmupAsLongAsTheRunEndsAtThePeakOrTheMinimum) {
  for (ScheduleKind kind : {ScheduleKind::Polynomial, ScheduleKind::CosineWithRestarts,
                            ScheduleKind::WarmupStableDecay, ScheduleKind::Cosine}) {
    LrSchedule s = scheduleOf(kind, 10, 1e-3);
    s.decaySteps = 3;
    EXPECT_DOUBLE_EQ(s.at(0.1, 9, 10), 0.1);
    double last = s.at(0.1, 10, 10);
    EXPECT_TRUE(std::isfinite(last));
    EXPECT_DOUBLE_EQ(last, 1e-3) << (int)kind;
  }
}

} // namespace
