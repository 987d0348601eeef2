// The drivers' readers: weights by name (--init-from), PyTorch's Linear
// layout transposed, dtypes rounded, a missing name listed; safetensors
// headers checked.
#include <cstring>

#include "runtime/driver/Runner.h"
#include "runtime/driver/Weights.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

/// y = x @ w with w [3, 2] (ampc's [in, out]) and a bias b [2] in f16.
test::Compiled linear() {
  return test::compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {4, 3});
    Tensor w = g.param("w", {3, 2}, Init::zeros());
    Tensor b = g.param("b", {2}, Init::zeros(), "f16");
    g.output(g.add(g.matmul(x, w, false, false, "mm"), g.cast(b, "f32"), "y"));
  });
}

/// A safetensors file in memory with f32 tensors.
rt::Safetensors fileOf(std::map<std::string, std::pair<std::vector<int64_t>, std::vector<float>>>
                           tensors,
                       std::map<std::string, std::string> metadata) {
  rt::Safetensors f;
  f.path = "weights.safetensors";
  f.metadata = std::move(metadata);
  for (const auto &[name, t] : tensors) {
    size_t at = f.data.size();
    f.data.append(reinterpret_cast<const char *>(t.second.data()), t.second.size() * 4);
    f.tensors[name] = {rt::DType::F32, t.first, at, t.second.size() * 4};
  }
  return f;
}

TEST(Weights, PyTorchLinearWeightsAreTransposedAndDtypesRounded) {
  test::Compiled c = linear();
  // PyTorch's Linear(3, 2).weight is [out, in] = [2, 3].
  rt::Safetensors torch = fileOf({{"w", {{2, 3}, {1, 2, 3, 4, 5, 6}}},
                                  {"b", {{2}, {0.1f, -2.5f}}}},
                                 {{"format", "pt"}});
  rt::loadWeights(torch, *c.ex, {"w", "b"}, c.ex->plan());
  EXPECT_EQ(test::valuesOf(*c.ex, "w"), (std::vector<float>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(test::valuesOf(*c.ex, "b"),
            (std::vector<float>{rt::f16ToF32(rt::f32ToF16(0.1f)), -2.5f}))
      << "rounded to the f16 param";
}

/// y = x @ wᵀ with w [2, 3] ([out, in], as an ONNX import keeps it:
/// transpose_b), trained, so that the backward reads w without transpose_b.
TEST(Weights, ALinearWeightReadTransposedKeepsPyTorchsLayout) {
  test::Compiled forward = test::compile([](GraphBuilder &g) {
    Tensor x = g.input("x", {4, 3});
    Tensor w = g.param("w", {2, 3}, Init::zeros());
    g.output(g.matmul(x, w, false, true, "mm"));
  });
  rt::Safetensors torch = fileOf({{"w", {{2, 3}, {1, 2, 3, 4, 5, 6}}}}, {{"format", "pt"}});
  rt::loadWeights(torch, *forward.ex, {"w"}, forward.ex->plan());
  EXPECT_EQ(test::valuesOf(*forward.ex, "w"), (std::vector<float>{1, 2, 3, 4, 5, 6}))
      << "PyTorch's [out, in] is this graph's layout: nothing to transpose";
}

TEST(Weights, AmpcLayoutShapesMustMatchAndMissingNamesAreListed) {
  test::Compiled c = linear();
  rt::Safetensors same = fileOf({{"w", {{3, 2}, {1, 2, 3, 4, 5, 6}}}, {"b", {{2}, {1, 1}}}}, {});
  rt::loadWeights(same, *c.ex, {"w", "b"}, c.ex->plan());
  EXPECT_EQ(test::valuesOf(*c.ex, "w"), (std::vector<float>{1, 2, 3, 4, 5, 6}));
  rt::Safetensors transposed = fileOf({{"w", {{2, 3}, {1, 2, 3, 4, 5, 6}}}}, {});
  try {
    rt::loadWeights(transposed, *c.ex, {"w"}, c.ex->plan());
    ADD_FAILURE() << "a transposed shape outside a PyTorch file was accepted";
  } catch (const rt::RuntimeError &e) {
    EXPECT_STREQ(e.what(), "weights.safetensors: tensor 'w' is [2,3], the graph's param [3,2]; "
                           "every misshapen tensor is its param transposed, as PyTorch's Linear "
                           "stores it: pass --init-layout torch");
  }
  rt::loadWeights(transposed, *c.ex, {"w"}, c.ex->plan(), rt::WeightLayout::Torch);
  EXPECT_EQ(test::valuesOf(*c.ex, "w"), (std::vector<float>{1, 4, 2, 5, 3, 6}))
      << "--init-layout torch reads it as PyTorch's";
  rt::Safetensors renamed = fileOf({{"fc.weight", {{3, 2}, {1, 2, 3, 4, 5, 6}}}}, {});
  try {
    rt::loadWeights(renamed, *c.ex, {"w"}, c.ex->plan());
    ADD_FAILURE() << "a missing weight was accepted";
  } catch (const rt::RuntimeError &e) {
    EXPECT_STREQ(e.what(), "weights.safetensors: no tensor 'w' (the file has fc.weight)");
  }
}

TEST(Safetensors, HeadersAreCheckedBeforeUse) {
  auto file = [](const std::string &header, size_t dataBytes) {
    std::string bytes(8, '\0');
    uint64_t size = header.size();
    std::memcpy(bytes.data(), &size, 8);
    return bytes + header + std::string(dataBytes, '\0');
  };
  EXPECT_NO_THROW(rt::parseSafetensors(
      file(R"({"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]}})", 8), "f"));
  for (const char *bad : {R"({"w":{"dtype":"F16","shape":[2,2],"data_offsets":[0,6]}})",
                          R"({"w":{"dtype":"F16","shape":[2,2],"data_offsets":[4,12]}})",
                          R"({"w":{"dtype":"Q4","shape":[2],"data_offsets":[0,8]}})",
                          R"({"w":[1,2]})", R"({"__metadata__":"x"})", R"([1])"})
    EXPECT_THROW(rt::parseSafetensors(file(bad, 8), "f"), rt::RuntimeError) << bad;
  EXPECT_THROW(rt::parseSafetensors(std::string("\xff\xff\xff\xff\xff\xff\xff\xff", 8), "f"),
               rt::RuntimeError);
}

} // namespace

// Accuracy skips the rows the loss ignores (their label is the plan's
// ignore_index): neither right nor counted.
TEST(Scoring, IgnoredRowsAreNotScored) {
  std::vector<float> logits = {0, 1, 0, /**/ 1, 0, 0, /**/ 0, 0, 1, /**/ 0, 1, 0};
  std::vector<int64_t> labels = {1, -100, 2, 0};
  EXPECT_EQ(rt::correctPredictions(logits, 3, labels, 4), 2);
  EXPECT_EQ(rt::correctPredictions(logits, 3, labels, 4, -100), 2);
  EXPECT_EQ(rt::scoredRows(labels, 4, -100), 3);
  EXPECT_EQ(rt::scoredRows(labels, 4, std::nullopt), 4);
  EXPECT_EQ(rt::scoredRows(labels, 2, -100), 1); // the padded last batch's real rows
  labels[1] = 0; // row 1's argmax is class 0: right, unless 0 is ignored
  EXPECT_EQ(rt::correctPredictions(logits, 3, labels, 4), 3);
  EXPECT_EQ(rt::correctPredictions(logits, 3, labels, 4, 0), 2);
  EXPECT_EQ(rt::scoredRows(labels, 4, 0), 2);
}

TEST(Scoring, TheIgnoredLabelIsThePlansCrossEntropys) {
  rt::Plan plan;
  EXPECT_EQ(rt::ignoredLabel(plan), std::nullopt);
  rt::Step loss;
  loss.kernel = rt::Kernel::SoftmaxCrossEntropy;
  plan.steps.push_back(loss);
  EXPECT_EQ(rt::ignoredLabel(plan), std::nullopt);
  plan.steps[0].attrs["ignore_index"] = -100;
  EXPECT_EQ(rt::ignoredLabel(plan), -100);
}
