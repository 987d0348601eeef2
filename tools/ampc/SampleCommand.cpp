// `ampc sample`: a language model continues a prompt (docs/gpt.md, "ampc
// sample"). A decode graph (the zoo's `--set decode=1`, or built here from a
// zoo graph's model record) runs one position per token against each
// layer's cache of earlier keys and values; any other language model runs
// one forward pass over the whole window per token.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "compiler/GraphIO.h"
#include "compiler/LanguageModel.h"
#include "mlir/IR/MLIRContext.h"
#include "models/Models.h"
#include "ops/GraphOps.h"
#include "runtime/core/Convert.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/Checkpoint.h"
#include "tools/ampc/AmpFlags.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Tokenizer.h"

using namespace mlir;

namespace ampc::cli {
namespace {

constexpr int64_t kByteVocab = 256;

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

/// Feeds `tokens` to the model and returns the logits of the next token.
class Steps {
public:
  virtual ~Steps() = default;
  virtual std::vector<float> next(const std::vector<int64_t> &tokens) = 0;
  /// The positions each forward pass covers.
  virtual int64_t width() const = 0;
};

void writeInteger(rt::Executor &ex, const rt::Buffer &b, const std::vector<int64_t> &values) {
  std::vector<std::byte> bytes(b.bytes);
  for (size_t i = 0; i < values.size(); ++i)
    rt::storeElement(bytes.data(), b.dtype, (int64_t)i, (double)values[i]);
  ex.write(b.id, bytes.data(), bytes.size());
}

/// A training graph: the last `seq` tokens, left-aligned (causal attention
/// makes the padding after them invisible to the position that predicts),
/// one forward pass per token.
class WindowSteps final : public Steps {
public:
  WindowSteps(rt::Executor &ex, const rt::Plan &plan, int ids, int64_t classes)
      : ex_(ex), plan_(plan), in_(plan.buffers[ids]), classes_(classes) {}
  std::vector<float> next(const std::vector<int64_t> &tokens) override {
    int64_t batch = in_.shape[0], seq = in_.shape[1];
    int64_t from = std::max<int64_t>(0, (int64_t)tokens.size() - seq),
            used = (int64_t)tokens.size() - from;
    std::vector<int64_t> window(batch * seq, 0);
    for (int64_t r = 0; r < batch; ++r)
      for (int64_t t = 0; t < used; ++t)
        window[r * seq + t] = tokens[from + t];
    writeInteger(ex_, in_, window);
    ex_.run();
    std::vector<float> logits = ex_.readF32(plan_.outputs[0]);
    return {logits.begin() + (used - 1) * classes_, logits.begin() + used * classes_};
  }
  int64_t width() const override { return in_.shape[1]; }

private:
  rt::Executor &ex_;
  const rt::Plan &plan_;
  const rt::Buffer &in_;
  int64_t classes_;
};

/// A decode graph: inputs ids, pos and mask, then each layer's k and v
/// caches; outputs the logits, then each layer's new k and v in the same
/// order. The caches hold positions 0 .. filled-1 of tokens[base ..]; when
/// they are full, the last half of the window is fed again from position 0.
class CachedSteps final : public Steps {
public:
  CachedSteps(rt::Executor &ex, const rt::Plan &plan, const std::string &graphFile)
      : ex_(ex), plan_(plan) {
    for (int id : plan.inputs) {
      const rt::Buffer &b = plan.buffers[id];
      if (b.name == "ids")
        ids_ = id;
      else if (b.name == "pos")
        pos_ = id;
      else if (b.name == "mask")
        mask_ = id;
      else
        caches_.push_back({id, 0, std::vector<float>(rt::numElements(b.shape), 0.0f)});
    }
    if (ids_ < 0 || pos_ < 0 || mask_ < 0 || caches_.size() + 1 != plan.outputs.size())
      throw CliError(graphFile, "not a decode graph of the zoo's (inputs ids, pos, mask and a k "
                                "and v cache per layer; outputs the logits and the new k and v)");
    length_ = plan.buffers[mask_].shape.back() - 1;
    for (size_t i = 0; i < caches_.size(); ++i) {
      const rt::Buffer &cache = plan.buffers[caches_[i].input],
                       &fresh = plan.buffers[plan.outputs[i + 1]];
      caches_[i].output = fresh.id;
      if (cache.shape.size() != 4 || fresh.shape.size() != 4 || cache.shape[1] != length_ ||
          fresh.shape[1] != 1 || cache.shape[2] != fresh.shape[2] ||
          cache.shape[3] != fresh.shape[3])
        throw CliError(graphFile, "cache input '" + cache.name + "' does not match output '" +
                                      fresh.name + "'");
    }
  }

  std::vector<float> next(const std::vector<int64_t> &tokens) override {
    std::vector<float> logits;
    while (base_ + filled_ < (int64_t)tokens.size()) {
      if (filled_ == length_) { // full: the last half again, from position 0
        base_ = (int64_t)tokens.size() - std::max<int64_t>(1, length_ / 2);
        filled_ = 0;
      }
      logits = feed(tokens[base_ + filled_]);
      ++filled_;
    }
    return logits;
  }
  int64_t width() const override { return 1; }

private:
  struct Cache {
    int input, output;
    std::vector<float> values;
  };

  std::vector<float> feed(int64_t token) {
    ex_.writeScalar(ids_, (double)token);
    ex_.writeScalar(pos_, (double)filled_);
    std::vector<float> mask(length_ + 1, -std::numeric_limits<float>::infinity());
    std::fill(mask.begin(), mask.begin() + filled_, 0.0f);
    mask[length_] = 0.0f; // the position fed now
    ex_.writeF32(mask_, mask);
    for (const Cache &c : caches_)
      ex_.writeF32(c.input, c.values);
    ex_.run();
    for (Cache &c : caches_) {
      std::vector<float> row = ex_.readF32(c.output);
      std::copy(row.begin(), row.end(), c.values.begin() + filled_ * row.size());
    }
    return ex_.readF32(plan_.outputs[0]);
  }

  rt::Executor &ex_;
  const rt::Plan &plan_;
  int ids_ = -1, pos_ = -1, mask_ = -1;
  int64_t length_ = 0, base_ = 0, filled_ = 0;
  std::vector<Cache> caches_;
};

/// Whether the module's graph is a decode graph: it has an input `pos`.
bool isDecodeGraph(ModuleOp module) {
  bool found = false;
  module.walk([&](graph::InputOp input) { found |= input.getName() == "pos"; });
  return found;
}

/// The decode graph of a training graph that the zoo built (its model
/// record): the same model at batch 1 with a KV cache, or null where the
/// graph has no record or its params are not the decode graph's (a graph
/// edited since).
OwningOpRef<ModuleOp> decodeGraphOf(MLIRContext &ctx, ModuleOp module) {
  std::optional<ModelRecord> record = modelRecordOf(module);
  if (!record || (record->name != "gpt2" && record->name != "llama"))
    return nullptr;
  record->args["batch"] = "1";
  record->args["decode"] = "1";
  OwningOpRef<ModuleOp> decode = buildModel(ctx, record->name, record->args);
  auto paramShapes = [](ModuleOp m) {
    std::map<std::string, std::vector<int64_t>> shapes;
    m.walk([&](graph::ParamOp p) {
      auto shape = cast<RankedTensorType>(p.getValue().getType()).getShape();
      shapes[p.getName().str()] = {shape.begin(), shape.end()};
    });
    return shapes;
  };
  return paramShapes(module) == paramShapes(*decode) ? std::move(decode) : nullptr;
}

} // namespace

int runSample(const Args &args) {
  // A checkpoint, or weights files together (a Hub model and a LoRA adapter).
  const std::vector<std::string> &weights = args.positionals();
  if (weights.empty())
    throw UsageError("expects the weights to sample from: a checkpoint, or a Hub model's "
                     "weights and a LoRA adapter's");
  std::string graphFile = args.getFile("graph");
  if (graphFile.empty())
    throw UsageError("ampc sample needs --graph G: the graph the checkpoint was trained from, "
                     "or its decode graph (--set batch=1 --set decode=1)");
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
  bool decode = false;
  std::string device = deviceFrom(args);
  AmpSettings settings = ampOptionsFrom(args);
  rt::Plan plan = onFile(graphFile, [&] {
    MLIRContext ctx;
    OwningOpRef<ModuleOp> module = loadGraph(ctx, graphFile);
    decode = isDecodeGraph(*module);
    if (!decode && !args.has("no-kv-cache"))
      if (OwningOpRef<ModuleOp> cached = decodeGraphOf(ctx, *module)) {
        module = std::move(cached);
        decode = true;
      }
    mlir::Value logits;
    if (decode)
      module->walk([&](graph::ReturnOp ret) {
        if (ret.getNumOperands() > 0)
          logits = ret.getOperand(0);
      });
    else
      logits = exposeLogits(*module);
    if (!logits || cast<RankedTensorType>(logits.getType()).getRank() != 3)
      throw GraphError("not a language model: its first output must be [batch, seq, vocab] logits");
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
  loadWeightFiles(args, weights, ex, "checkpoint");
  std::unique_ptr<Steps> steps;
  if (decode) {
    steps = std::make_unique<CachedSteps>(ex, plan, graphFile);
  } else {
    int ids = -1;
    for (int id : plan.inputs)
      if (ids < 0 && !rt::isStoredFloat(plan.buffers[id].dtype) &&
          plan.buffers[id].shape.size() == 2)
        ids = id;
    if (ids < 0)
      throw CliError(graphFile, "the graph has no integer [batch, seq] input of tokens");
    steps = std::make_unique<WindowSteps>(ex, plan, ids, classes);
  }
  // The prompt as typed, then the text of each new token: the decoded
  // sequence past the decoded prompt (a token need not be whole characters).
  std::fwrite(prompt.data(), 1, prompt.size(), stdout);
  size_t printed = tokenizer->decode(tokens).size(), start = printed;
  std::string stop = args.has("stop") ? *args.get("stop") : "";
  std::mt19937_64 rng(args.getInt("seed", 0, 0));
  auto began = std::chrono::steady_clock::now();
  int64_t written = 0;
  for (int64_t n = 0; n < count; ++n, ++written) {
    std::vector<float> logits = onFile(graphFile, [&] { return steps->next(tokens); });
    tokens.push_back(
        nextToken(logits.data(), tokenizer->size(), temperature, topK, topP, rng));
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
                         "position%s (docs/gpt.md, \"ampc sample\")\n",
                 (long long)written, seconds, (double)written / seconds,
                 (long long)steps->width(), steps->width() == 1 ? "" : "s");
  return 0;
}

} // namespace ampc::cli
