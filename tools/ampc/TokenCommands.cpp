// `ampc tokenize`: texts as tokens in llm.c's shard format, by bytes or by a
// Hugging Face tokenizer.json (--tokenizer). See docs/gpt.md.
#include <algorithm>
#include <cstdio>

#include "runtime/core/Files.h"
#include "runtime/driver/TokenData.h"
#include "tools/ampc/Commands.h"
#include "tools/ampc/Corpus.h"
#include "tools/ampc/Tokenizer.h"

namespace ampc::cli {
namespace {

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

} // namespace

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
    std::string eot = *args.get("eot");
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

} // namespace ampc::cli
