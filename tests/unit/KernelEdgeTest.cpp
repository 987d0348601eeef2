// Kernels at the edges of their inputs: empty tensors, an empty contraction,
// integer division that would overflow; each runs or fails with a message,
// never with a signal.
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

TEST(KernelEdges, AnEmptyContractionGivesZeros) {
  auto c = test::compile([](GraphBuilder &g) {
    Tensor a = g.input("a", {3, 0}), b = g.input("b", {0, 4});
    g.output(g.matmul(a, b, false, false, "mm"));
  });
  c.set("mm", std::vector<double>(12, 7.0));
  c.ex->run();
  EXPECT_EQ(c.get("mm"), std::vector<double>(12, 0.0));
}

TEST(KernelEdges, EmptyTensorsRunThroughElementwiseMovementAndReductions) {
  auto c = test::compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {0, 4}), y = g.input("y", {2, 4});
    Tensor r = g.relu(x, "r");
    g.output(g.concat({r, y}, 0, "cat"));
    g.output(g.reduceSum(x, {0}, false, "sum"));
  });
  c.set("y", {1, 2, 3, 4, 5, 6, 7, 8});
  c.ex->run();
  EXPECT_EQ(c.get("cat"), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(c.get("sum"), std::vector<double>(4, 0.0));
}

TEST(KernelEdges, EmptyConstsAndParamsLoadAndReadBack) {
  // Their host vectors have no data pointer: nothing may be copied.
  auto c = test::compile([](GraphBuilder &g) {
    Tensor k = g.constValue("k", {0, 3}, {});
    Tensor w = g.param("w", {0, 3}, Init::values({}));
    g.output(g.add(g.add(k, w, "kw"), g.input("x", {0, 3}), "sum"));
  });
  c.set("x", {});
  c.ex->run();
  EXPECT_TRUE(c.get("sum").empty());
  // Written and read back: an empty param of given values keeps its (empty)
  // "data", which the reader requires of that init.
  rt::Plan back = rt::planFromJson(rt::planToJson(c.plan));
  EXPECT_EQ(rt::planToJson(back), rt::planToJson(c.plan));
}

TEST(KernelEdges, IntegerDivisionThatOverflowsIsAnError) {
  auto c = test::compile([](GraphBuilder &g) {
    g.output(g.div(g.input("a", {2}, "i64"), g.input("b", {2}, "i64"), "q"));
  });
  c.set("a", {-0x1p63, 6});
  c.set("b", {-1, 3});
  try {
    c.ex->run();
    ADD_FAILURE() << "INT64_MIN / -1 ran";
  } catch (const rt::RuntimeError &e) {
    EXPECT_STREQ(e.what(), "step 'q' (div): integer division overflows");
  }
  c.set("a", {-8, 6});
  c.ex->run();
  EXPECT_EQ(c.get("q"), (std::vector<double>{8, 2}));
}

} // namespace
