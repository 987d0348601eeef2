// The rate cut on a plateau (runtime/driver/LrPlateau.h) at its edges:
// PyTorch's rule counts more than `patience` bad evaluations, a floor stops
// the cuts, a negligible cut is not made, and a checkpoint's state resumes
// only for the metric it followed.
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "runtime/core/Errors.h"
#include "runtime/driver/LrPlateau.h"

using namespace ampc::rt;

namespace {

EvalRecord lossAt(int64_t step, double loss) {
  EvalRecord e;
  e.step = step;
  e.loss = loss;
  return e;
}

TEST(LrPlateau, CutsAfterMoreThanPatienceEvaluationsWithoutImprovement) {
  PlateauSettings s;
  s.patience = 2;
  s.factor = 0.5;
  LrPlateau p("val_loss", s, 0.1);
  EXPECT_FALSE(p.step(lossAt(1, 1.0)));
  EXPECT_FALSE(p.step(lossAt(2, 1.0)));  // 1 bad
  EXPECT_FALSE(p.step(lossAt(3, 0.99995))); // within the threshold: 2 bad
  EXPECT_TRUE(p.step(lossAt(4, 1.0)));   // 3 bad > patience 2
  EXPECT_DOUBLE_EQ(p.lr(), 0.05);
  EXPECT_FALSE(p.step(lossAt(5, 0.5))); // a real improvement
  EXPECT_DOUBLE_EQ(p.lr(), 0.05);
}

TEST(LrPlateau, StopsAtTheFloorAndSkipsANegligibleCut) {
  PlateauSettings s;
  s.patience = 0;
  s.factor = 0.1;
  s.minLr = 0.004;
  LrPlateau p("val_accuracy", s, 0.1);
  EvalRecord e;
  e.accuracy = 0.5;
  EXPECT_FALSE(p.step(e));
  EXPECT_TRUE(p.step(e)); // an accuracy that does not rise is not better
  EXPECT_DOUBLE_EQ(p.lr(), 0.01);
  EXPECT_TRUE(p.step(e));
  EXPECT_DOUBLE_EQ(p.lr(), 0.004);
  EXPECT_FALSE(p.step(e)); // at the floor
  EXPECT_DOUBLE_EQ(p.lr(), 0.004);

  PlateauSettings tiny;
  tiny.patience = 0;
  tiny.factor = 0.5;
  LrPlateau q("val_loss", tiny, 1e-8); // half of 1e-8 is a cut of 5e-9 <= eps
  EXPECT_FALSE(q.step(lossAt(1, 1.0)));
  EXPECT_FALSE(q.step(lossAt(2, 1.0)));
  EXPECT_DOUBLE_EQ(q.lr(), 1e-8);
}

TEST(LrPlateau, AnEvaluationWithoutTheMetricIsAnError) {
  LrPlateau p("val_accuracy", PlateauSettings{}, 0.1);
  EXPECT_THROW(p.step(lossAt(3, 1.0)), RuntimeError);
}

TEST(LrPlateau, ResumesItsStateForTheSameMetricOnly) {
  PlateauSettings s;
  s.patience = 1;
  s.cooldown = 2;
  LrPlateau p("val_loss", s, 0.1);
  p.step(lossAt(1, 1.0));
  p.step(lossAt(2, 2.0));
  EXPECT_TRUE(p.step(lossAt(3, 2.0)));
  std::map<std::string, std::string> meta;
  p.save(meta);

  LrPlateau resumed("val_loss", s, 0.1);
  resumed.resume(meta);
  EXPECT_DOUBLE_EQ(resumed.lr(), p.lr());
  // In the cooldown, bad evaluations do not count; then two more cut.
  for (LrPlateau *q : {&p, &resumed}) {
    EXPECT_FALSE(q->step(lossAt(4, 2.0)));
    EXPECT_FALSE(q->step(lossAt(5, 2.0)));
    EXPECT_FALSE(q->step(lossAt(6, 2.0)));
    EXPECT_TRUE(q->step(lossAt(7, 2.0)));
  }
  EXPECT_DOUBLE_EQ(resumed.lr(), p.lr());

  LrPlateau other("val_accuracy", s, 0.1);
  other.resume(meta);
  EXPECT_DOUBLE_EQ(other.lr(), 0.1);
}

} // namespace
