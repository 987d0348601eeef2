// `ampc tokenize` (a text file as tokens in llm.c's shard format) and
// `ampc sample` (a language model continues a prompt), by bytes or by a
// Hugging Face tokenizer.json (--tokenizer). See docs/gpt.md.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include "compiler/GraphIO.h"
#include "compiler/LanguageModel.h"
#include "mlir/IR/MLIRContext.h"
#include "runtime/core/Convert.h"
#include "runtime/core/Files.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/TokenData.h"
#include "runtime/driver/Weights.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/BytePairEncoding.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Corpus.h"
#include "tools/ampc/Tokenizer.h"

using namespace mlir;

namespace ampc::cli {
namespace {

constexpr int64_t kByteVocab = 256;

/// --tokenizer's tokenizer.json, or bytes.
std::unique_ptr<Tokenizer> tokenizerFrom(const Args &args) {
  std::string path = args.getFile("tokenizer");
  if (path.empty())
    return byteTokenizer();
  std::string error;
  std::optional<std::string> json = rt::readFile(path, error);
  if (!json)
    throw CliError(path, "cannot read the tokenizer: " + error);
  try {
    return parseTokenizer(*json);
  } catch (const TokenizerError &e) {
    throw CliError(path, e.what());
  }
}

/// Writes `ids` in GPT-2's uint16 format, or in LLaMA 3's uint32 one where
/// the tokenizer's ids reach 65536.
void writeShard(const std::string &path, const std::vector<int64_t> &ids, bool wide) {
  std::vector<uint32_t> tokens(ids.begin(), ids.end());
  if (std::string why = rt::writeTokenShard(path, tokens, wide ? rt::kWideTokenShard
                                                               : rt::kNarrowTokenShard);
      !why.empty())
    throw CliError(path, "cannot write the token shard: " + why);
  std::printf("%s: %zu tokens%s\n", path.c_str(), tokens.size(), wide ? " (uint32)" : "");
}

/// The next token from the logits of one position: the most likely at
/// temperature 0, else a draw from softmax(logits / temperature) over the
/// `topK` most likely (all for 0), and of those over the fewest most likely
/// whose probabilities sum to `topP` or more (nucleus sampling; Hugging
/// Face's order: temperature, top-k, top-p).
int64_t nextToken(const float *logits, int64_t vocab, double temperature, int64_t topK,
                  double topP, std::mt19937_64 &rng) {
  std::vector<int64_t> order(vocab);
  for (int64_t i = 0; i < vocab; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  if (temperature == 0)
    return order[0];
  int64_t keep = topK > 0 ? std::min(topK, vocab) : vocab;
  std::vector<double> weights(keep);
  for (int64_t i = 0; i < keep; ++i)
    weights[i] = std::exp(((double)logits[order[i]] - logits[order[0]]) / temperature);
  double total = 0, kept = 0;
  for (double w : weights)
    total += w;
  for (int64_t i = 0; i < keep; ++i)
    if ((kept += weights[i]) >= topP * total) {
      weights.resize(i + 1);
      break;
    }
  std::discrete_distribution<int64_t> pick(weights.begin(), weights.end());
  return order[pick(rng)];
}

} // namespace

int runTokenize(const Args &args) {
  if (args.positionals().empty())
    throw UsageError("expects one input file or more: texts, or .jsonl files of {\"text\": ...}");
  std::string out = outputFile(args), val = args.getFile("val");
  if (args.has("val-fraction") && val.empty())
    throw UsageError("--val-fraction sets the share of --val: give --val VAL.bin");
  double fraction = args.getNumber("val-fraction", 0.1, 0.0, 1.0);
  const std::vector<std::string> &files = args.positionals();
  std::vector<std::string> documents = readCorpus(files);
  std::unique_ptr<Tokenizer> tokenizer = tokenizerFrom(args);
  std::string where = files.size() == 1 ? files[0]
                                        : files[0] + " and " + std::to_string(files.size() - 1) +
                                              " more file" + (files.size() > 2 ? "s" : "");
  std::vector<int64_t> separator;
  if (args.has("eot")) {
    const std::string &eot = *args.get("eot");
    try {
      separator = tokenizer->encode(eot, /*addSpecial=*/false);
    } catch (const TokenizerError &e) {
      throw UsageError("--eot: " + std::string(e.what()));
    }
    if (separator.size() != 1)
      throw UsageError("--eot '" + eot + "' is " + std::to_string(separator.size()) +
                       " tokens, not one: give the tokenizer's end-of-text token "
                       "(<|endoftext|>, </s>)");
  }
  // One document: the last F of its bytes go to --val, cut at a character's
  // start. Several: the last F of the documents (one at least).
  bool byBytes = documents.size() == 1;
  if (byBytes) {
    std::string text = std::move(documents[0]);
    size_t split = val.empty() ? text.size() : (size_t)((double)text.size() * (1.0 - fraction));
    if (split < 2 || text.size() - split < (val.empty() ? 0 : 2))
      throw CliError(where, "holds " + std::to_string(text.size()) + " bytes: too few for " +
                                (val.empty() ? "a shard (2 at least)"
                                             : "a training and a validation shard (2 bytes each)"));
    if (args.has("tokenizer"))
      while (split > 0 && split < text.size() && ((unsigned char)text[split] & 0xc0) == 0x80)
        --split;
    documents = {text.substr(0, split)};
    if (!val.empty())
      documents.push_back(text.substr(split));
  } else if (documents.empty()) {
    throw CliError(where, "holds no document");
  }
  size_t held = val.empty() ? 0
                : byBytes ? 1
                          : std::max<size_t>(1, (size_t)std::llround(fraction * documents.size()));
  if (held >= documents.size())
    throw CliError(where, "holds " + std::to_string(documents.size()) +
                              " documents: too few for a training and a validation shard");
  checkOutput(args, "output");
  checkOutput(args, "val");
  std::vector<int64_t> train, validation;
  for (size_t d = 0; d < documents.size(); ++d) {
    std::vector<int64_t> ids;
    try {
      ids = tokenizer->encode(documents[d], /*addSpecial=*/true);
    } catch (const TokenizerError &e) {
      throw CliError(where, (documents.size() > 1 ? "document " + std::to_string(d + 1) + ": "
                                                   : std::string()) +
                                e.what());
    }
    std::vector<int64_t> &into = d + held < documents.size() ? train : validation;
    into.insert(into.end(), ids.begin(), ids.end());
    if (!(byBytes && d + 1 < documents.size())) // not where one text was cut in two
      into.insert(into.end(), separator.begin(), separator.end());
  }
  bool wide = tokenizer->size() > 65536;
  writeShard(out, train, wide);
  if (!val.empty())
    writeShard(val, validation, wide);
  return 0;
}

int runSample(const Args &args) {
  const std::string &checkpoint = inputFile(args);
  std::string graphFile = args.getFile("graph");
  if (graphFile.empty())
    throw UsageError("ampc sample needs --graph G: the graph the checkpoint was trained from "
                     "(for speed, built with --set batch=1)");
  if (!args.has("prompt") || args.get("prompt")->empty())
    throw UsageError("ampc sample needs --prompt TEXT: at least one byte to continue");
  std::string prompt = *args.get("prompt");
  int64_t count = args.getInt("tokens", 0, 0);
  double temperature = args.getNumber("temperature", 1.0, 0.0, 100.0);
  int64_t topK = args.getInt("top-k", 0, 0, INT32_MAX);
  double topP = args.getNumber("top-p", 1.0, 0.0, 1.0);
  if (topP == 0)
    throw UsageError("option '--top-p' needs a share above 0 (1 keeps every token; "
                     "--temperature 0 takes the most likely)");
  std::unique_ptr<Tokenizer> tokenizer = tokenizerFrom(args);
  std::string tokenizerFile = args.getFile("tokenizer");
  std::vector<int64_t> tokens;
  try {
    tokens = tokenizer->encode(prompt, /*addSpecial=*/true);
  } catch (const TokenizerError &e) {
    throw UsageError("--prompt: " + std::string(e.what()));
  }
  if (tokens.empty())
    throw UsageError("--prompt gives no tokens: nothing to continue");
  int64_t classes = 0;
  std::string device = deviceFrom(args);
  AmpSettings settings = ampOptionsFrom(args);
  rt::Plan plan = onFile(graphFile, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> module = loadGraph(ctx, graphFile);
    mlir::Value logits = exposeLogits(*module);
    classes = cast<RankedTensorType>(logits.getType()).getDimSize(2);
    if (tokenizerFile.empty() && classes != kByteVocab)
      throw GraphError("ampc sample writes bytes: the logits must have 256 classes, not " +
                       std::to_string(classes) + " (a byte-level model: ampc model gpt2 --set "
                       "vocab=256; for a model of BPE tokens give its tokenizer.json with "
                       "--tokenizer)");
    if (classes < tokenizer->size())
      throw GraphError("the logits have " + std::to_string(classes) + " classes, fewer than the " +
                       std::to_string(tokenizer->size()) + " tokens of " + tokenizerFile +
                       ": the tokenizer of another model?");
    runAmpPipeline(*module, settings);
    return lowerToPlan(*module, rt::targetOfDevice(device), {ProbeOptions{}, fusionsFrom(args, nullptr)});
  });
  rt::Executor ex(plan, {/*training=*/false, (uint64_t)args.getInt("seed", 0, 0),
                         /*profile=*/false, device, true, nullptr, false});
  std::vector<std::string> params;
  for (const rt::Buffer &b : plan.buffers)
    if (b.kind == rt::BufferKind::Param && b.copyOf < 0)
      params.push_back(b.name);
  onFile(checkpoint, [&] {
    rt::loadWeights(rt::readSafetensors(checkpoint, "checkpoint"), ex, params, plan,
                    weightLayoutFrom(args));
  });
  int ids = -1;
  for (int id : plan.inputs)
    if (ids < 0 && !rt::isStoredFloat(plan.buffers[id].dtype) && plan.buffers[id].shape.size() == 2)
      ids = id;
  if (ids < 0)
    throw CliError(graphFile, "the graph has no integer [batch, seq] input of tokens");
  const rt::Buffer &in = plan.buffers[ids];
  int64_t batch = in.shape[0], seq = in.shape[1];
  // The prompt as typed, then the text of each new token: the decoded
  // sequence past the decoded prompt (a token need not be whole characters).
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  size_t printed = tokenizer->decode(tokens).size(), start = printed;
  std::string stop = args.has("stop") ? *args.get("stop") : "";
  std::mt19937_64 rng(args.getInt("seed", 0, 0));
  auto began = std::chrono::steady_clock::now();
  int64_t written = 0;
  for (int64_t n = 0; n < count; ++n, ++written) {
    // The last `seq` tokens, left-aligned: causal attention makes the
    // padding after them invisible to the position that predicts.
    int64_t from = std::max<int64_t>(0, (int64_t)tokens.size() - seq),
            used = (int64_t)tokens.size() - from;
    std::vector<std::byte> bytes(in.bytes);
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t t = 0; t < used; ++t)
        rt::storeElement(bytes.data(), in.dtype, r * seq + t, (double)tokens[from + t]);
    ex.write(ids, bytes.data(), bytes.size());
    onFile(graphFile, [&] { ex.run(); });
    std::vector<float> logits = ex.readF32(plan.outputs[0]);
    tokens.push_back(nextToken(logits.data() + (used - 1) * classes, tokenizer->size(),
                               temperature, topK, topP, rng));
    std::string text = tokenizer->decode(tokens);
    if (text.size() > printed)
      std::fwrite(text.data() + printed, 1, text.size() - printed, stdout);
    printed = std::max(printed, text.size());
    std::fflush(stdout);
    if (!stop.empty() && text.size() > start && text.find(stop, start) != std::string::npos) {
      ++written;
      break; // the token that completed --stop is written whole, as generate() does
    }
  }
  std::fputc('\n', stdout);
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  if (written > 0) // on stderr: stdout is the text alone
    std::fprintf(stderr, "%lld tokens in %.2f s: %.1f tokens/s, each a forward pass over %lld "
                         "positions (docs/gpt.md, \"ampc sample\")\n",
                 (long long)written, seconds, (double)written / seconds, (long long)seq);
  return 0;
}

} // namespace ampc::cli
