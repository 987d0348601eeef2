// `ampc tokenize` (a text file as byte tokens in llm.c's shard format) and
// `ampc sample` (a byte-level language model continues a prompt). See
// docs/gpt.md.
#include <algorithm>
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
#include "tools/ampc/Commands.h"

using namespace mlir;

namespace ampc::cli {
namespace {

constexpr int64_t kByteVocab = 256;

void writeShard(const std::string &path, const std::string &text, size_t from, size_t to) {
  std::vector<uint16_t> tokens(text.begin() + from, text.begin() + to);
  for (uint16_t &t : tokens)
    t &= 0xff; // the bytes, not the chars' signed values
  if (std::string why = rt::writeTokenShard(path, tokens); !why.empty())
    throw CliError(path, "cannot write the token shard: " + why);
  std::printf("%s: %zu tokens\n", path.c_str(), tokens.size());
}

/// The next token from the logits of one position: the most likely at
/// temperature 0, else a draw from softmax(logits / temperature) over the
/// `topK` most likely (all for 0), and of those over the fewest most likely
/// whose probabilities sum to `topP` or more (nucleus sampling; Hugging
/// Face's order: temperature, top-k, top-p).
int64_t nextToken(const float *logits, double temperature, int64_t topK, double topP,
                  std::mt19937_64 &rng) {
  std::vector<int64_t> order(kByteVocab);
  for (int64_t i = 0; i < kByteVocab; ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
  if (temperature == 0)
    return order[0];
  int64_t keep = topK > 0 ? std::min(topK, kByteVocab) : kByteVocab;
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
  const std::string &in = inputFile(args);
  std::string out = outputFile(args), val = args.getFile("val");
  if (args.has("val-fraction") && val.empty())
    throw UsageError("--val-fraction sets the share of --val: give --val VAL.bin");
  double fraction = args.getNumber("val-fraction", 0.1, 0.0, 1.0);
  std::string error;
  std::optional<std::string> text = rt::readFile(in, error);
  if (!text)
    throw CliError(in, "cannot read the text: " + error);
  size_t split = val.empty() ? text->size() : (size_t)((double)text->size() * (1.0 - fraction));
  if (split < 2 || text->size() - split < (val.empty() ? 0 : 2))
    throw CliError(in, "holds " + std::to_string(text->size()) + " bytes: too few for " +
                           (val.empty() ? "a shard (2 at least)"
                                        : "a training and a validation shard (2 bytes each)"));
  checkOutput(args, "output");
  checkOutput(args, "val");
  writeShard(out, *text, 0, split);
  if (!val.empty())
    writeShard(val, *text, split, text->size());
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
  int64_t topK = args.getInt("top-k", 0, 0, kByteVocab);
  double topP = args.getNumber("top-p", 1.0, 0.0, 1.0);
  if (topP == 0)
    throw UsageError("option '--top-p' needs a share above 0 (1 keeps every byte; "
                     "--temperature 0 takes the most likely)");
  std::string device = deviceFrom(args);
  AmpSettings settings = ampOptionsFrom(args);
  rt::Plan plan = onFile(graphFile, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> module = loadGraph(ctx, graphFile);
    mlir::Value logits = exposeLogits(*module);
    int64_t vocab = cast<RankedTensorType>(logits.getType()).getDimSize(2);
    if (vocab != kByteVocab)
      throw GraphError("ampc sample writes bytes: the logits must have 256 classes, not " +
                       std::to_string(vocab) + " (a byte-level model: ampc model gpt2 --set "
                       "vocab=256; GPT-2's BPE tokens need its tokenizer)");
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
  std::vector<int64_t> tokens(prompt.begin(), prompt.end());
  for (int64_t &t : tokens)
    t &= 0xff;
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  std::mt19937_64 rng(args.getInt("seed", 0, 0));
  for (int64_t n = 0; n < count; ++n) {
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
    int64_t next = nextToken(logits.data() + (used - 1) * kByteVocab, temperature, topK, topP, rng);
    tokens.push_back(next);
    std::fputc((int)next, stdout);
    std::fflush(stdout);
  }
  std::fputc('\n', stdout);
  return 0;
}

} // namespace ampc::cli
