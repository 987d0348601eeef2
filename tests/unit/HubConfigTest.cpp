// Hugging Face config.json and the zoo (models/HubConfig.h): the config
// written for a zoo model reads back as the same model, and one field
// changed is named as the difference.
#include <gtest/gtest.h>

#include "compiler/Diagnostics.h"
#include "models/HubConfig.h"

namespace ampc {
namespace {

ModelRecord llamaRecord(std::map<std::string, std::string> changes) {
  std::map<std::string, std::string> args = {
      {"layers", "2"},     {"hidden", "64"},        {"heads", "4"},
      {"kv_heads", "2"},   {"ffn", "auto"},         {"seq", "32"},
      {"vocab", "256"},    {"rope_theta", "500000"}, {"rope_scaling", "none"},
      {"norm_eps", "1e-5"}, {"qkv_bias", "0"},      {"tie", "0"},
      {"batch", "8"},      {"decode", "0"}};
  for (auto &[key, value] : changes)
    args[key] = value;
  return {"llama", args};
}

TEST(HubConfigTest, WrittenConfigsReadBackAsTheSameModel) {
  std::vector<ModelRecord> records = {
      llamaRecord({}),
      llamaRecord({{"qkv_bias", "1"}, {"tie", "1"}, {"norm_eps", "1e-6"}}),
      llamaRecord({{"rope_scaling", "llama3:32.0,1,4,8192"}, {"ffn", "96"}}),
      {"gpt2", {{"layers", "3"}, {"hidden", "48"}, {"heads", "4"}, {"seq", "64"},
                {"vocab", "256"}, {"batch", "2"}, {"decode", "0"}}}};
  for (const ModelRecord &r : records) {
    rt::Json config = hubConfigOf(r, 250, "bf16");
    EXPECT_EQ(config["vocab_size"], 250);
    EXPECT_EQ(config["torch_dtype"], "bfloat16");
    EXPECT_EQ(hubConfigDifference(config, r, 250), "") << rt::dumpJson(config);
    HubModel back = modelFromHubConfig(config);
    EXPECT_EQ(back.record.name, r.name);
    EXPECT_EQ(back.maxSeq, std::stoll(r.args.at("seq")));
  }
  EXPECT_EQ(modelFromHubConfig(hubConfigOf(records[1], 256, "f32")).record.args.at("qkv_bias"),
            "1");
  EXPECT_EQ(hubConfigOf(records[1], 256, "f32")["model_type"], "qwen2");
  EXPECT_EQ(hubConfigOf(records[0], 256, "f32")["intermediate_size"], 256); // 8/3 of 64, to 256
  EXPECT_EQ(modelFromHubConfig(hubConfigOf(records[2], 256, "f32")).record.args.at("rope_scaling"),
            "llama3:32,1,4,8192");
}

TEST(HubConfigTest, TheFirstDifferenceIsNamed) {
  ModelRecord r = llamaRecord({});
  rt::Json config = hubConfigOf(r, 256, "f32");
  config["rms_norm_eps"] = 1e-6;
  EXPECT_EQ(hubConfigDifference(config, r, 256),
            "its rms_norm_eps gives norm_eps=1e-06, the graph has norm_eps=1e-5");
  EXPECT_EQ(hubConfigDifference(hubConfigOf(r, 256, "f32"), r, 200),
            "its vocab_size gives vocab=256, the graph has vocab=200");
  rt::Json gpt = hubConfigOf({"gpt2", {{"layers", "1"}, {"hidden", "8"}, {"heads", "2"},
                                       {"seq", "4"}, {"vocab", "16"}}},
                             16, "f32");
  EXPECT_EQ(hubConfigDifference(gpt, r, 256), "it describes a gpt2, the graph is the zoo's llama");
  EXPECT_THROW(hubConfigOf({"mlp", {}}, 10, "f32"), GraphError);
}

TEST(HubConfigTest, DefaultsAreTransformers) {
  rt::Json config = {{"model_type", "llama"}, {"hidden_size", 64},   {"num_attention_heads", 4},
                     {"num_hidden_layers", 2}, {"intermediate_size", 128}, {"vocab_size", 100}};
  HubModel m = modelFromHubConfig(config);
  EXPECT_EQ(m.record.args.at("kv_heads"), "4"); // num_attention_heads
  EXPECT_EQ(m.record.args.at("norm_eps"), "1e-06");
  EXPECT_EQ(m.record.args.at("rope_theta"), "10000");
  EXPECT_EQ(m.record.args.at("tie"), "0");
  EXPECT_EQ(m.record.args.at("seq"), "1024");
  config["model_type"] = "mistral";
  config["sliding_window"] = 512;
  m = modelFromHubConfig(config);
  EXPECT_EQ(m.maxSeq, 512);
  EXPECT_EQ(m.maxSeqField, "sliding_window");
  EXPECT_EQ(m.record.args.at("seq"), "512");
  config["model_type"] = "qwen2"; // a window Qwen 2 leaves off
  EXPECT_EQ(modelFromHubConfig(config).maxSeqField, "max_position_embeddings");
}

} // namespace
} // namespace ampc
