// The gpt2 and llama models and their token data: GPT-2 124M's parameter
// count (llm.c's) and the LLaMA default's, causality through each whole
// model (a later token never changes earlier logits), and the windows a
// token shard yields.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <unistd.h>

#include "compiler/LanguageModel.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "ops/GraphOps.h"
#include "runtime/driver/TokenData.h"
#include "tests/unit/RuntimeTestUtil.h"
#include "tests/unit/TestUtil.h"

using namespace ampc;

namespace {

int64_t paramCount(mlir::ModuleOp m) {
  int64_t n = 0;
  m.walk([&](graph::ParamOp p) {
    n += mlir::cast<mlir::RankedTensorType>(p.getResult().getType()).getNumElements();
  });
  return n;
}

TEST(Gpt2, TheDefaultIsGpt2SmallWithLlmcsParameterCount) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "gpt2", {});
  // llm.c's num_parameters for GPT-2 124M with the vocabulary padded to 50304.
  EXPECT_EQ(paramCount(*m), 124475904);
}

TEST(Llama, TheDefaultHas125MParameters) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "llama", {});
  // Token table and output projection 32000 x 768 each; per layer q and out
  // 768 x 768, k and v 768 x 256 (4 kv heads), SwiGLU 3 x 768 x 2048, two
  // norm scales; the final norm.
  EXPECT_EQ(paramCount(*m), 2 * 32000 * 768 +
                                12 * (2 * 768 * 768 + 2 * 768 * 256 + 3 * 768 * 2048 + 2 * 768) +
                                768);
}

/// Logits of a tiny `model` (gpt2 or llama; batch 2, seq 16) at `level` for
/// two token rows.
std::vector<float> logitsFor(const std::string &model, const std::vector<double> &ids,
                             const std::string &level) {
  mlir::MLIRContext ctx;
  std::map<std::string, std::string> sets = {{"layers", "2"}, {"hidden", "32"}, {"heads", "4"},
                                             {"seq", "16"},   {"vocab", "64"},  {"batch", "2"}};
  if (model == "llama")
    sets["kv_heads"] = "2";
  auto m = buildModel(ctx, model, sets);
  exposeLogits(*m);
  AmpSettings amp;
  amp.level = level;
  runAmpPipeline(*m, amp);
  rt::Plan plan = lowerToPlan(*m);
  rt::Executor ex(plan, {});
  test::setValues(ex, "ids", ids);
  ex.run();
  return ex.readF32(plan.outputs[0]);
}

/// Changing token 9 of row 0 changes that row's logits from position 9 on
/// and nothing else, at O0 and O1.
void expectCausal(const std::string &model) {
  std::vector<double> ids(32);
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = (double)((i * 37 + 11) % 64);
  for (const char *level : {"O0", "O1"}) {
    std::vector<float> before = logitsFor(model, ids, level);
    std::vector<double> changed = ids;
    changed[9] = (double)(((int)ids[9] + 5) % 64); // row 0, position 9
    std::vector<float> after = logitsFor(model, changed, level);
    const int64_t vocab = 64, seq = 16;
    for (int64_t t = 0; t < seq; ++t) {
      bool same = std::equal(before.begin() + t * vocab, before.begin() + (t + 1) * vocab,
                             after.begin() + t * vocab);
      if (t < 9)
        EXPECT_TRUE(same) << level << ": position " << t << " saw token 9";
      else
        EXPECT_FALSE(same) << level << ": position " << t << " did not see token 9";
    }
    EXPECT_TRUE(std::equal(before.begin() + seq * vocab, before.end(), after.begin() + seq * vocab))
        << level << ": row 1 changed with row 0";
  }
}

TEST(Gpt2, ALaterTokenNeverChangesEarlierLogits) { expectCausal("gpt2"); }

// Rotary positions and grouped-query heads keep the causal mask's promise.
TEST(Llama, ALaterTokenNeverChangesEarlierLogits) { expectCausal("llama"); }

TEST(Gpt2, OnlyALanguageModelsLogitsAreExposed) {
  mlir::MLIRContext ctx;
  auto m = buildModel(ctx, "mlp", {});
  EXPECT_THROW(exposeLogits(*m), GraphError);
}

/// A shard of `tokens` in a temporary file, in GPT-2's format or LLaMA 3's.
std::string shardOf(const std::vector<uint32_t> &tokens, const std::string &name,
                    const rt::TokenShardFormat &format = rt::kNarrowTokenShard) {
  std::string path = ::testing::TempDir() + name;
  EXPECT_EQ(rt::writeTokenShard(path, tokens, format), "");
  return path;
}

TEST(TokenData, WindowsOfSeqPlusOneTokensStepBySeqWithinEachShard) {
  std::vector<uint32_t> a(11), b(7);
  for (int i = 0; i < 11; ++i)
    a[i] = i;
  for (int i = 0; i < 7; ++i)
    b[i] = 100000 + i;
  std::string dir = ::testing::TempDir();
  shardOf(a, "gpt_windows_1.bin");
  shardOf(b, "gpt_windows_2.bin", rt::kWideTokenShard); // the formats mix
  rt::TokenWindows w(dir + "gpt_windows_*.bin", /*seq=*/3, /*vocab=*/200000);
  // Shard 1: (11 - 1) / 3 = 3 windows; shard 2: (7 - 1) / 3 = 2.
  ASSERT_EQ(w.count(), 5);
  auto windowAt = [&](int64_t i) {
    std::vector<uint32_t> tokens;
    for (int t = 0; t < 4; ++t)
      tokens.push_back(w.window(i)[t]);
    return tokens;
  };
  EXPECT_EQ(windowAt(0), (std::vector<uint32_t>{0, 1, 2, 3}));
  EXPECT_EQ(windowAt(2), (std::vector<uint32_t>{6, 7, 8, 9}));
  EXPECT_EQ(windowAt(3), (std::vector<uint32_t>{100000, 100001, 100002, 100003}))
      << "no window crosses shards";
  EXPECT_EQ(windowAt(4), (std::vector<uint32_t>{100003, 100004, 100005, 100006}));
}

TEST(TokenData, GptTwosFormatHoldsSixteenBitsAndLlamaThreesThirtyTwo) {
  std::string path = ::testing::TempDir() + "gpt_narrow.bin";
  EXPECT_EQ(rt::writeTokenShard(path, {1, 65536}, rt::kNarrowTokenShard),
            "token 65536 does not fit GPT-2's uint16 format");
  std::string wide = shardOf({1, 65536, 4000000000u}, "gpt_wide.bin", rt::kWideTokenShard);
  std::ifstream in(wide, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), {});
  ASSERT_EQ(bytes.size(), 1024u + 12);
  int32_t header[3];
  uint32_t tokens[3];
  std::memcpy(header, bytes.data(), sizeof header);
  std::memcpy(tokens, bytes.data() + 1024, sizeof tokens);
  EXPECT_EQ(header[0], 20240801);
  EXPECT_EQ(header[1], 7);
  EXPECT_EQ(header[2], 3);
  EXPECT_EQ(tokens[2], 4000000000u);
  try {
    rt::TokenWindows w(wide, 1, 70000);
    FAIL() << "a token of 4e9 passed a vocabulary of 70000";
  } catch (const rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("token 4000000000 at position 2"), std::string::npos)
        << e.what();
  }
}

TEST(TokenData, ATokenOutsideTheVocabularyIsNamedWithItsPosition) {
  std::string path = shardOf({1, 2, 3, 70, 4, 5}, "gpt_vocab.bin");
  try {
    rt::TokenWindows w(path, 2, 64);
    FAIL() << "a token of 70 passed a vocabulary of 64";
  } catch (const rt::RuntimeError &e) {
    EXPECT_NE(std::string(e.what()).find("token 70 at position 3"), std::string::npos) << e.what();
  }
}

} // namespace

namespace {

/// The decode graph (`decode=1`), fed one token at a time with its own k and
/// v written back into the caches, computes the training graph's logits at
/// every position, from the same params (at O0, to f32 rounding: its
/// matmuls have one row, its attention the masked cache).
void expectDecodeMatchesWindow(const std::string &model) {
  mlir::MLIRContext ctx;
  std::map<std::string, std::string> sets = {{"layers", "2"}, {"hidden", "32"}, {"heads", "4"},
                                             {"seq", "8"},    {"vocab", "64"},  {"batch", "1"}};
  if (model == "llama")
    sets["kv_heads"] = "2";
  auto full = buildModel(ctx, model, sets);
  exposeLogits(*full);
  rt::Plan fullPlan = lowerToPlan(*full);
  rt::Executor window(fullPlan, {});
  std::vector<double> ids = {5, 17, 3, 60, 9, 9, 41, 2};
  test::setValues(window, "ids", ids);
  window.run();
  std::vector<float> want = window.readF32(fullPlan.outputs[0]);

  sets["decode"] = "1";
  auto decode = buildModel(ctx, model, sets);
  rt::Plan plan = lowerToPlan(*decode);
  rt::Executor step(plan, {});
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param) {
      std::vector<std::byte> bytes = window.readBytes(fullPlan.find(b.name));
      step.write(b.id, bytes.data(), bytes.size());
    }
  std::vector<int> caches;
  for (int id : plan.inputs)
    if (plan.buffers[id].name.find("_cache") != std::string::npos)
      caches.push_back(id);
  ASSERT_EQ(caches.size() + 1, plan.outputs.size());
  std::vector<std::vector<double>> values(caches.size());
  for (size_t c = 0; c < caches.size(); ++c)
    values[c].assign(rt::numElements(plan.buffers[caches[c]].shape), 0.0);
  const int64_t seq = 8, vocab = 64;
  for (int64_t t = 0; t < seq; ++t) {
    test::setValues(step, "ids", {ids[t]});
    test::setValues(step, "pos", {(double)t});
    std::vector<double> mask(seq + 1, -INFINITY);
    std::fill(mask.begin(), mask.begin() + t, 0.0);
    mask[seq] = 0.0;
    test::setValues(step, "mask", mask);
    for (size_t c = 0; c < caches.size(); ++c)
      test::setValues(step, plan.buffers[caches[c]].name, values[c]);
    step.run();
    std::vector<float> got = step.readF32(plan.outputs[0]);
    for (int64_t v = 0; v < vocab; ++v)
      EXPECT_NEAR(got[v], want[t * vocab + v], 1e-5) << model << ": position " << t;
    for (size_t c = 0; c < caches.size(); ++c) {
      std::vector<float> row = step.readF32(plan.outputs[c + 1]);
      std::copy(row.begin(), row.end(), values[c].begin() + t * row.size());
    }
  }
}

TEST(Gpt2, TheDecodeGraphComputesTheTrainingGraphsLogits) { expectDecodeMatchesWindow("gpt2"); }

// Rotary rows at the position, grouped-query heads repeated after the cache.
TEST(Llama, TheDecodeGraphComputesTheTrainingGraphsLogits) { expectDecodeMatchesWindow("llama"); }

} // namespace
