// The plan index (compiler/plan/PlanIndex.h): readers, writers and sole
// readers follow every rewrite a pass makes through it.
#include <gtest/gtest.h>

#include "compiler/plan/PlanIndex.h"

using namespace ampc;
using plan::PlanIndex;

namespace {

/// x -> a = relu(x) -> b = add(a, a) -> c = neg(a); returns c.
rt::Plan chain() {
  rt::Plan p;
  for (const char *name : {"x", "a", "b", "c"}) {
    rt::Buffer b;
    b.id = (int)p.buffers.size();
    b.name = name;
    b.kind = b.id == 0 ? rt::BufferKind::Input : rt::BufferKind::Temp;
    b.shape = {4};
    b.bytes = 16;
    p.buffers.push_back(b);
  }
  p.inputs = {0};
  p.steps = {{"relu", rt::Kernel::Relu, {0}, {1}, rt::Json::object()},
             {"add", rt::Kernel::Add, {1, 1}, {2}, rt::Json::object()},
             {"neg", rt::Kernel::Neg, {1}, {3}, rt::Json::object()}};
  p.outputs = {3};
  return p;
}

TEST(PlanIndex, ReadersWritersAndSoleReaders) {
  rt::Plan p = chain();
  PlanIndex index(p);
  EXPECT_EQ(index.readers(1), (std::vector<int>{1, 2})); // add once, though it reads a twice
  EXPECT_EQ(index.writer(2), 1);
  EXPECT_EQ(index.writer(0), -1);
  EXPECT_EQ(index.soleReader(0), 0);
  EXPECT_EQ(index.soleReader(1), -1); // three reads
  EXPECT_EQ(index.soleReader(2), -1); // none
  EXPECT_EQ(index.soleReader(3), -1); // the plan returns it
  EXPECT_TRUE(index.kept(3));
  EXPECT_FALSE(index.kept(2));
}

TEST(PlanIndex, FollowsEditsErasuresAndMoves) {
  rt::Plan p = chain();
  PlanIndex index(p);
  index.erase(1); // the add goes
  EXPECT_EQ(index.readers(1), (std::vector<int>{2}));
  EXPECT_EQ(index.soleReader(1), 2);
  EXPECT_EQ(index.writer(2), -1);
  index.edit(2).inputs = {0}; // neg reads x now
  EXPECT_TRUE(index.readers(1).empty());
  EXPECT_EQ(index.readers(0), (std::vector<int>{0, 2}));
  index.move(0, 1); // relu runs where the add ran
  EXPECT_TRUE(index.erased(0));
  EXPECT_EQ(index.writer(1), 1);
  EXPECT_EQ(index.readers(0), (std::vector<int>{1, 2}));
  index.commit();
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].kernel, rt::Kernel::Relu);
  EXPECT_EQ(index.writer(1), 0);
  EXPECT_EQ(index.readers(0), (std::vector<int>{0, 1}));
}

TEST(PlanIndex, WritesInPlaceBetweenSteps) {
  rt::Plan p = chain();
  p.steps.insert(p.steps.begin() + 1, {"update", rt::Kernel::Sgd, {0}, {}, rt::Json::object()});
  PlanIndex index(p);
  EXPECT_TRUE(index.writtenBetween({0}, 0, 2));
  EXPECT_FALSE(index.writtenBetween({1}, 0, 2));
  EXPECT_FALSE(index.writtenBetween({0}, 1, 3)); // strictly between
  index.erase(1);
  EXPECT_FALSE(index.writtenBetween({0}, 0, 2));
}

TEST(PlanIndex, AddsBuffersAndTakesWholeRewrites) {
  rt::Plan p = chain();
  PlanIndex index(p);
  int id = index.addBuffer("mask", rt::DType::I32, {4});
  EXPECT_EQ(id, 4);
  index.edit(0).outputs.push_back(id);
  EXPECT_EQ(index.writer(id), 0);
  index.rewrite().steps.push_back({"neg2", rt::Kernel::Neg, {id}, {}, rt::Json::object()});
  EXPECT_EQ(index.readers(id), (std::vector<int>{3}));
  index.commit();
  EXPECT_EQ(p.steps.size(), 4u);
}

} // namespace
