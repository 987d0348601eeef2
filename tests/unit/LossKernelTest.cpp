// The cross entropy's options against f64 references, in f32, f16 and
// bf16 logits: PyTorch's label smoothing, ignored labels and class weights
// (docs/runtime.md, "Cross entropy").
#include <cmath>

#include "tests/unit/KernelFixture.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;
using namespace ampc::test;

namespace {

using Vec = std::vector<double>;

class LossKernels : public KernelsInDtypes {};

// PyTorch's cross_entropy(label_smoothing=0.1, ignore_index=-100): the mean
// over the rows not ignored of lse - 0.9 x_y - 0.1 mean(x); 0 when every
// row is ignored.
TEST_P(LossKernels, CrossEntropySmoothedAndIgnored) {
  Vec logits = randomValues(4 * 5, dt(), 21);
  Vec labels = {4, -100, 2, 0}, ignored = {-100, -100, -100, -100};
  auto c = compile([&](GraphBuilder &g) {
    Tensor l = g.input("logits", {4, 5}, dt());
    Tensor some = g.input("labels", {4}, "i64"), all = g.input("ignored", {4}, "i32");
    g.output(g.softmaxCrossEntropy(l, some, "xent", 0.1, -100));
    g.output(g.softmaxCrossEntropy(l, all, "none", 0.1, -100));
    g.output(g.softmaxCrossEntropy(l, some, "summed", 0.1, -100, std::nullopt, "sum"));
    g.output(g.softmaxCrossEntropy(l, all, "none_summed", 0.1, -100, std::nullopt, "sum"));
  });
  c.set("logits", logits);
  c.set("labels", labels);
  c.set("ignored", ignored);
  c.ex->run();
  double xent = 0;
  for (int64_t r : {0, 2, 3}) {
    double mx = -INFINITY, z = 0, sum = 0;
    for (int64_t k = 0; k < 5; ++k)
      mx = std::max(mx, logits[r * 5 + k]);
    for (int64_t k = 0; k < 5; ++k) {
      z += std::exp(logits[r * 5 + k] - mx);
      sum += logits[r * 5 + k];
    }
    xent += (std::log(z) + mx - 0.9 * logits[r * 5 + (int)labels[r]] - 0.1 * sum / 5) / 3;
  }
  expectClose(c.get("xent"), {xent});
  EXPECT_EQ(c.get("none"), Vec{0.0});
  // reduction="sum": the counted rows' sum, 0 when none counts.
  expectClose(c.get("summed"), {xent * 3});
  EXPECT_EQ(c.get("none_summed"), Vec{0.0});
}

// PyTorch's cross_entropy(weight=w, label_smoothing=0.1, ignore_index=-100):
// the rows' sum of w_y (0.9 (lse - x_y)) + 0.1 / C sum_c w_c (lse - x_c),
// over the sum of their w_y; the weights a const or an input.
TEST_P(LossKernels, CrossEntropyWeighted) {
  Vec logits = randomValues(4 * 5, dt(), 22), weights = {1.0, 2.0, 0.5, 3.0, 0.25};
  Vec labels = {4, -100, 2, 0};
  auto c = compile([&](GraphBuilder &g) {
    Tensor l = g.input("logits", {4, 5}, dt()), y = g.input("labels", {4}, "i64");
    Tensor fixed = g.constValue("w", {5}, weights), fed = g.input("fed", {5});
    g.output(g.softmaxCrossEntropy(l, y, "xent", 0.1, -100, fixed));
    g.output(g.softmaxCrossEntropy(l, y, "summed", 0.1, -100, fixed, "sum"));
    g.output(g.softmaxCrossEntropy(l, y, "rows", 0.1, -100, fixed, "none"));
    g.output(g.softmaxCrossEntropy(l, y, "plain", 0.0, -100, fed));
    // f16 weights widened: the cast may fold into the loss, which reads them as they are.
    Tensor half = g.cast(g.input("half", {5}, "f16"), "f32", "widened");
    g.output(g.softmaxCrossEntropy(l, y, "widened_loss", 0.0, -100, half));
  });
  c.set("logits", logits);
  c.set("labels", labels);
  c.set("fed", weights);
  c.set("half", weights); // each exact in f16
  c.ex->run();
  double xent = 0, plain = 0, divisor = 0;
  Vec rows(4, 0.0); // reduction="none": each row's numerator, 0 when ignored
  for (int64_t r : {0, 2, 3}) {
    double mx = -INFINITY, z = 0, smooth = 0;
    const double *x = &logits[r * 5];
    for (int64_t k = 0; k < 5; ++k)
      mx = std::max(mx, x[k]);
    for (int64_t k = 0; k < 5; ++k)
      z += std::exp(x[k] - mx);
    double lse = std::log(z) + mx, wy = weights[(int)labels[r]];
    for (int64_t k = 0; k < 5; ++k)
      smooth += weights[k] * (lse - x[k]);
    rows[r] = wy * 0.9 * (lse - x[(int)labels[r]]) + 0.1 / 5 * smooth;
    xent += rows[r];
    plain += wy * (lse - x[(int)labels[r]]);
    divisor += wy;
  }
  expectClose(c.get("xent"), {xent / divisor});
  expectClose(c.get("summed"), {xent}); // reduction="sum": no divisor
  expectClose(c.get("rows"), rows);
  expectClose(c.get("plain"), {plain / divisor});
  EXPECT_EQ(c.get("widened_loss"), c.get("plain"));
}

INSTANTIATE_TEST_SUITE_P(Dtypes, LossKernels, ::testing::Values("f32", "f16", "bf16"),
                         [](const auto &info) { return info.param; });

} // namespace
