// Text to token ids and back, for `ampc tokenize` and `ampc sample`: the
// bytes themselves (vocabulary 256, the default), or a Hugging Face
// tokenizer.json whose model is BPE (GPT-2's, LLaMA's and most decoder
// models'). See docs/gpt.md, "Tokenizers".
#ifndef AMPC_TOOLS_AMPC_TOKENIZER_H
#define AMPC_TOOLS_AMPC_TOKENIZER_H

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampc::cli {

/// A tokenizer.json that ampc cannot read, or text a tokenizer cannot take:
/// the message says what and where.
struct TokenizerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  /// The ids of `text`; with `addSpecial`, also the special tokens the
  /// tokenizer's post-processor adds (LLaMA's <s>), as Hugging Face's
  /// `tokenizer(text)` does. Throws TokenizerError on text it cannot take.
  virtual std::vector<int64_t> encode(const std::string &text, bool addSpecial) const = 0;
  /// The bytes that `ids` stand for. Throws TokenizerError on an id the
  /// vocabulary does not have.
  virtual std::string decode(const std::vector<int64_t> &ids) const = 0;
  /// One more than the largest id.
  virtual int64_t size() const = 0;
};

/// Each byte its own token.
std::unique_ptr<Tokenizer> byteTokenizer();

/// A tokenizer.json's text, read and checked whole. Throws TokenizerError
/// naming what it cannot read and where.
std::unique_ptr<Tokenizer> parseTokenizer(const std::string &json);

} // namespace ampc::cli

#endif
