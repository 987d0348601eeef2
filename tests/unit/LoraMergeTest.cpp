// LoRA adapters folded into their weights (runtime/driver/LoraMerge.h):
// w + scale · lora_a · lora_b, and the adapters dropped.
#include <gtest/gtest.h>

#include "runtime/core/Errors.h"
#include "runtime/driver/LoraMerge.h"

using namespace ampc;

namespace {

void put(rt::Safetensors &f, const std::string &name, std::vector<int64_t> shape,
         std::vector<float> v) {
  f.tensors[name] = {rt::DType::F32, std::move(shape), f.data.size(), v.size() * sizeof(float)};
  f.data.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
}

TEST(LoraMergeTest, FoldsScaledProductIntoTheWeight) {
  rt::Safetensors f;
  f.path = "ft.ckpt";
  put(f, "l.w", {2, 3}, {1, 2, 3, 4, 5, 6});              // [in 2, out 3]
  put(f, "l.lora_a", {2, 1}, {1, -2});                    // [in, rank 1]
  put(f, "l.lora_b", {1, 3}, {0.5f, 0, 1});               // [rank, out]
  put(f, "other.w", {2, 2}, {7, 8, 9, 10});
  EXPECT_EQ(rt::mergeLoraAdapters(f, {{"l", {"l.w", false, 2.0}}}), 1);
  EXPECT_FALSE(f.tensors.count("l.lora_a"));
  EXPECT_FALSE(f.tensors.count("l.lora_b"));
  // a·b = [[0.5, 0, 1], [-1, 0, -2]], times 2, plus w.
  EXPECT_EQ(rt::valuesAsF32(f, f.tensors.at("l.w")), (std::vector<float>{2, 2, 5, 2, 5, 2}));
  EXPECT_EQ(rt::valuesAsF32(f, f.tensors.at("other.w")), (std::vector<float>{7, 8, 9, 10}));
  EXPECT_EQ(rt::mergeLoraAdapters(f, {}), 0); // nothing left to merge
}

TEST(LoraMergeTest, FoldsIntoAWeightStoredOutByIn) { // PyTorch's Linear, imported
  rt::Safetensors f;
  f.path = "ft.ckpt";
  put(f, "l.weight", {3, 2}, {1, 4, 2, 5, 3, 6}); // the weight above, [out 3, in 2]
  put(f, "l.lora_a", {2, 1}, {1, -2});
  put(f, "l.lora_b", {1, 3}, {0.5f, 0, 1});
  EXPECT_EQ(rt::mergeLoraAdapters(f, {{"l", {"l.weight", true, 2.0}}}), 1);
  EXPECT_EQ(rt::valuesAsF32(f, f.tensors.at("l.weight")), (std::vector<float>{2, 2, 2, 5, 5, 2}));
  put(f, "l.lora_a", {3, 1}, {1, 1, 1}); // in 3: chains with [3, 2] read as [in, out] alone
  put(f, "l.lora_b", {1, 2}, {1, 1});
  EXPECT_THROW(rt::mergeLoraAdapters(f, {{"l", {"l.weight", true, 1.0}}}), rt::RuntimeError);
}

TEST(LoraMergeTest, RefusesWhatDoesNotChain) {
  auto file = [](std::vector<int64_t> bShape) {
    rt::Safetensors f;
    f.path = "ft.ckpt";
    put(f, "l.w", {2, 3}, std::vector<float>(6));
    put(f, "l.lora_a", {2, 1}, std::vector<float>(2));
    put(f, "l.lora_b", bShape, std::vector<float>(bShape[0] * bShape[1]));
    return f;
  };
  rt::Safetensors f = file({1, 2});
  EXPECT_THROW(rt::mergeLoraAdapters(f, {{"l", {"l.w", false, 1.0}}}), rt::RuntimeError);
  f = file({1, 3});
  EXPECT_THROW(rt::mergeLoraAdapters(f, {}), rt::RuntimeError); // no layer
  f.tensors.erase("l.lora_a");
  EXPECT_THROW(rt::mergeLoraAdapters(f, {{"l", {"l.w", false, 1.0}}}), rt::RuntimeError); // b alone
}

} // namespace
