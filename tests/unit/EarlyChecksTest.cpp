// The finite check in parts (runtime/core/EarlyChecks.h): each gradient goes
// to the part after its last writer, and a check that cannot be split safely
// stays whole.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "runtime/core/EarlyChecks.h"

using namespace ampc;

namespace {

/// The CUDA plan of an O1 simplenet training step, and its check's index.
rt::Plan simplenetPlan(size_t *check) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "simplenet", {{"batch", "8"}, {"hidden", "64"}});
  runTrainingPipeline(*m, AmpSettings{}, TrainSettings{});
  rt::Plan plan = lowerToPlan(*m, rt::cudaTarget());
  auto it = std::find_if(plan.steps.begin(), plan.steps.end(),
                         [](const rt::Step &s) { return s.kernel == rt::Kernel::CheckFinite; });
  EXPECT_NE(it, plan.steps.end());
  *check = it - plan.steps.begin();
  return plan;
}

bool writes(const rt::Plan &plan, size_t step, int buffer) {
  const std::vector<int> &outs = plan.steps[step].outputs;
  return std::any_of(outs.begin(), outs.end(),
                     [&](int o) { return rt::buffersOverlap(plan, o, buffer); });
}

TEST(EarlyChecks, EachGradientIsCheckedAfterItsLastWriter) {
  size_t check;
  rt::Plan plan = simplenetPlan(&check);
  const rt::Step &c = plan.steps[check];
  std::vector<rt::EarlyCheck> parts = rt::earlyChecks(plan, check, 0);
  ASSERT_EQ(parts.size(), 3u) << "simplenet's three layers write their gradients apart";
  std::multiset<int> seen;
  for (size_t p = 0; p < parts.size(); ++p) {
    if (p > 0)
      EXPECT_LT(parts[p - 1].after, parts[p].after);
    EXPECT_LT(parts[p].after, check);
    bool written = false;
    for (int i : parts[p].inputs) {
      seen.insert(i);
      int g = c.inputs[i];
      written |= writes(plan, parts[p].after, g);
      for (size_t j = parts[p].after + 1; j < check; ++j)
        EXPECT_FALSE(writes(plan, j, g))
            << plan.steps[j].name << " writes " << plan.buffers[g].name << " after its part";
    }
    EXPECT_TRUE(written) << "a part follows the last writer of one of its gradients";
  }
  std::multiset<int> all;
  for (size_t i = 0; i < c.inputs.size(); ++i)
    all.insert((int)i);
  EXPECT_EQ(seen, all) << "every gradient is in exactly one part";
  EXPECT_TRUE(rt::earlyChecks(plan, check, int64_t(1) << 40).empty())
      << "one part: the check stays whole";
}

// A step without results writes its operands in place (assign, accumulate):
// a gradient it reads is final only after it.
TEST(EarlyChecks, AStepWithoutResultsWritesItsOperands) {
  size_t check;
  rt::Plan plan = simplenetPlan(&check);
  int first = plan.steps[check].inputs[0];
  rt::Step assign;
  assign.name = "in-place";
  assign.kernel = rt::Kernel::Assign;
  assign.inputs = {first, first};
  plan.steps.insert(plan.steps.begin() + check, assign);
  ++check;
  std::vector<rt::EarlyCheck> parts = rt::earlyChecks(plan, check, 0);
  ASSERT_FALSE(parts.empty());
  for (const rt::EarlyCheck &p : parts)
    if (std::count(p.inputs.begin(), p.inputs.end(), 0))
      EXPECT_EQ(p.after, check - 1) << "the part waits for the step that writes in place";
}

TEST(EarlyChecks, ACheckThatCannotBeSplitStaysWhole) {
  size_t check;
  rt::Plan plan = simplenetPlan(&check);
  ASSERT_FALSE(rt::earlyChecks(plan, check, 0).empty());
  // A gradient that no step writes.
  rt::Plan unwritten = plan;
  int param = -1;
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && param < 0)
      param = b.id;
  unwritten.steps[check].inputs[0] = param;
  EXPECT_TRUE(rt::earlyChecks(unwritten, check, 0).empty());
  // Not a plain check.
  EXPECT_TRUE(rt::earlyChecks(plan, check - 1, 0).empty());
}

} // namespace
