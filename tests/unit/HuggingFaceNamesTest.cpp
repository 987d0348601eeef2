// --init-layout hf: Hugging Face GPT-2 and LLaMA checkpoints renamed and
// laid out as the zoo's gpt2 and llama params (runtime/driver/HuggingFaceNames.h).
#include <cstring>

#include "compiler/Lowering.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "runtime/core/Errors.h"
#include "runtime/driver/HuggingFaceNames.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

/// A file of f32 tensors whose values are 0, 1, 2, ... in each.
rt::Safetensors fileOf(const std::map<std::string, std::vector<int64_t>> &shapes) {
  rt::Safetensors f;
  f.path = "hf.safetensors";
  for (const auto &[name, shape] : shapes) {
    std::vector<float> v(rt::numElements(shape));
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = (float)i;
    f.tensors[name] = {rt::DType::F32, shape, f.data.size(), v.size() * sizeof(float)};
    f.data.append(reinterpret_cast<const char *>(v.data()), v.size() * sizeof(float));
  }
  return f;
}

std::vector<float> valuesOf(const rt::Safetensors &f, const std::string &name) {
  const rt::Safetensors::Tensor &t = f.tensors.at(name);
  std::vector<float> v(t.bytes / sizeof(float));
  std::memcpy(v.data(), f.data.data() + t.offset, t.bytes);
  return v;
}

rt::Plan planOf(const std::string &model, const std::map<std::string, std::string> &sets) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, model, sets);
  return lowerToPlan(*m);
}

TEST(HuggingFaceNames, Gpt2SplitsCAttnPadsTheVocabularyAndCutsPositions) {
  rt::Plan plan = planOf("gpt2", {{"layers", "1"}, {"hidden", "4"}, {"heads", "2"}, {"seq", "3"},
                                  {"vocab", "8"}, {"batch", "1"}});
  rt::Safetensors hf = fileOf({{"transformer.wte.weight", {6, 4}},
                               {"transformer.wpe.weight", {5, 4}},
                               {"transformer.h.0.attn.c_attn.weight", {4, 12}},
                               {"transformer.h.0.attn.c_attn.bias", {12}},
                               {"transformer.h.0.attn.bias", {1, 1, 5, 5}},
                               {"transformer.h.0.mlp.c_fc.weight", {4, 16}},
                               {"transformer.ln_f.bias", {4}}});
  rt::Safetensors ours = rt::fromHuggingFace(hf, plan);
  // Rows 6 and 7 of the padded table are 0; positions 3 and 4 are cut.
  std::vector<float> table = valuesOf(ours, "embeddings.token.w");
  ASSERT_EQ(ours.tensors.at("embeddings.token.w").shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(table[23], 23.0f);
  EXPECT_EQ(table[24], 0.0f);
  EXPECT_EQ(ours.tensors.at("embeddings.position.w").shape, (std::vector<int64_t>{3, 4}));
  // Row 1 of c_attn: q is columns 0-3 (12..15), k 4-7, v 8-11; Conv1D is [in, out].
  EXPECT_EQ(valuesOf(ours, "layer0.attn.q.w")[4], 12.0f);
  EXPECT_EQ(valuesOf(ours, "layer0.attn.k.w")[4], 16.0f);
  EXPECT_EQ(valuesOf(ours, "layer0.attn.v.w")[4], 20.0f);
  EXPECT_EQ(valuesOf(ours, "layer0.attn.v.b"), (std::vector<float>{8, 9, 10, 11}));
  EXPECT_EQ(ours.tensors.at("layer0.mlp.fc1.w").shape, (std::vector<int64_t>{4, 16}));
  EXPECT_EQ(ours.tensors.count("head.norm.bias"), 1u);
  EXPECT_EQ(ours.tensors.count("layer0.attn.bias"), 0u) << "the mask buffer is left out";
}

TEST(HuggingFaceNames, ALargerVocabularyOrAnotherWidthIsLeftForTheShapeCheck) {
  rt::Plan plan = planOf("gpt2", {{"layers", "1"}, {"hidden", "4"}, {"heads", "2"}, {"seq", "3"},
                                  {"vocab", "8"}, {"batch", "1"}});
  // Cut to the graph's 8 rows, a 10-token checkpoint would lose tokens;
  // padded to 4 columns, a 5-wide one would be another model.
  EXPECT_EQ(rt::fromHuggingFace(fileOf({{"wte.weight", {10, 4}}}), plan)
                .tensors.at("embeddings.token.w").shape,
            (std::vector<int64_t>{10, 4}));
  EXPECT_EQ(rt::fromHuggingFace(fileOf({{"wte.weight", {6, 5}}}), plan)
                .tensors.at("embeddings.token.w").shape,
            (std::vector<int64_t>{6, 5}));
  EXPECT_EQ(rt::fromHuggingFace(fileOf({{"wpe.weight", {2, 4}}}), plan)
                .tensors.at("embeddings.position.w").shape,
            (std::vector<int64_t>{2, 4}))
      << "fewer positions than seq are not padded";
}

TEST(HuggingFaceNames, LlamaTransposesLinearsAndTiesAMissingHead) {
  rt::Plan plan = planOf("llama", {{"layers", "1"}, {"hidden", "4"}, {"heads", "2"},
                                   {"kv_heads", "1"}, {"ffn", "6"}, {"seq", "3"},
                                   {"vocab", "8"}, {"batch", "1"}});
  rt::Safetensors hf = fileOf({{"model.embed_tokens.weight", {6, 4}},
                               {"model.layers.0.self_attn.k_proj.weight", {2, 4}},
                               {"model.layers.0.mlp.gate_proj.weight", {6, 4}},
                               {"model.layers.0.input_layernorm.weight", {4}},
                               {"model.layers.0.self_attn.rotary_emb.inv_freq", {1}},
                               {"model.norm.weight", {4}}});
  rt::Safetensors ours = rt::fromHuggingFace(hf, plan);
  // k_proj [out 2, in 4] becomes [in 4, out 2]: element (1, 0) is (0, 1) = 1.
  ASSERT_EQ(ours.tensors.at("layer0.attn.k.w").shape, (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(valuesOf(ours, "layer0.attn.k.w")[2], 1.0f);
  EXPECT_EQ(ours.tensors.at("layer0.mlp.gate.w").shape, (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(ours.tensors.count("layer0.attn.norm.scale"), 1u);
  EXPECT_EQ(ours.tensors.count("head.norm.scale"), 1u);
  // No lm_head: the token table transposed, its 2 padded columns 0.
  ASSERT_EQ(ours.tensors.at("head.logits.w").shape, (std::vector<int64_t>{4, 8}));
  std::vector<float> head = valuesOf(ours, "head.logits.w");
  EXPECT_EQ(head[1], 4.0f); // (0, 1) = table (1, 0)
  EXPECT_EQ(head[6], 0.0f);
  EXPECT_EQ(head[7], 0.0f);
}

TEST(HuggingFaceNames, AWeightTheGraphHasNoPlaceForIsRefused) {
  std::map<std::string, std::string> shape = {{"layers", "1"}, {"hidden", "4"}, {"heads", "2"},
                                              {"kv_heads", "1"}, {"ffn", "6"}, {"seq", "3"},
                                              {"vocab", "8"}, {"batch", "1"}};
  rt::Plan plan = planOf("llama", shape);
  auto errorOf = [&](const rt::Plan &p, std::map<std::string, std::vector<int64_t>> tensors) {
    try {
      rt::fromHuggingFace(fileOf(tensors), p);
    } catch (const rt::RuntimeError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(errorOf(plan, {{"model.layers.0.self_attn.q_proj.bias", {4}}})
                .find("tensor 'model.layers.0.self_attn.q_proj.bias' has no place in the graph "
                      "(no param 'layer0.attn.q.b'): build it with --set qkv_bias=1"),
            std::string::npos)
      << "Qwen's q bias was dropped";
  EXPECT_NE(errorOf(plan, {{"model.layers.0.mlp.experts.0.weight", {4, 4}}})
                .find("is no weight of Hugging Face's GPT-2 or LLaMA"),
            std::string::npos);
  shape["qkv_bias"] = "1";
  shape["tie"] = "1";
  rt::Plan qwen = planOf("llama", shape);
  rt::Safetensors ours = rt::fromHuggingFace(
      fileOf({{"model.layers.0.self_attn.k_proj.bias", {2}}, {"model.embed_tokens.weight", {8, 4}}}),
      qwen);
  EXPECT_EQ(ours.tensors.count("layer0.attn.k.b"), 1u);
  EXPECT_EQ(ours.tensors.count("head.logits.w"), 0u) << "the tied graph has no output projection";
}

} // namespace

namespace {

TEST(HuggingFaceNames, ExportRefusesAParamNeitherModelHas) {
  rt::Safetensors ours = fileOf({{"embeddings.token.w", {8, 4}},
                                 {"embeddings.position.w", {3, 4}},
                                 {"layer0.attn.gate.w", {4, 4}}});
  try {
    rt::toHuggingFace(ours, 0);
    ADD_FAILURE() << "a param without a Hugging Face name was written";
  } catch (const rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find(
                  "param 'layer0.attn.gate.w' has no place in Hugging Face's GPT2LMHeadModel"),
              std::string::npos)
        << e.what();
  }
  rt::Safetensors hf = rt::toHuggingFace(fileOf({{"embeddings.token.w", {8, 4}},
                                                  {"embeddings.position.w", {3, 4}}}),
                                          6);
  EXPECT_EQ(hf.tensors.at("transformer.wte.weight").shape, (std::vector<int64_t>{6, 4}));
  EXPECT_EQ(hf.tensors.at("transformer.wpe.weight").shape, (std::vector<int64_t>{3, 4}));
}

} // namespace
