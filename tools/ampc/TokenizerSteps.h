// The text steps of a Hugging Face tokenizer.json around its BPE model: the
// normalizer, the pre-tokenizer (which splits text into words) and the
// decoder, read once into typed steps (ReadTokenizerSteps.cpp) and run
// (TokenizerSteps.cpp). Each supported type does what the `tokenizers`
// library's does; any other type is refused by name.
#ifndef AMPC_TOOLS_AMPC_TOKENIZERSTEPS_H
#define AMPC_TOOLS_AMPC_TOKENIZERSTEPS_H

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>
#include <unicode/uversion.h>

U_NAMESPACE_BEGIN // icu is an alias of a versioned namespace
class Normalizer2;
class RegexPattern;
U_NAMESPACE_END

namespace ampc::cli {

/// A piece of text on its way to the BPE model. `atStart`: it begins the
/// whole text (Metaspace's prepend_scheme "first" prepends only there).
struct TextPiece {
  std::string text;
  bool atStart = false;
};

struct NormalizeStep {
  enum class Kind { Prepend, Replace, UnicodeForm } kind;
  std::string from, to;
  const icu::Normalizer2 *form = nullptr;
};

struct PreTokenizeStep {
  /// Split also stands for Digits, Punctuation, Whitespace and
  /// WhitespaceSplit, each a split by a regex of its own.
  enum class Kind { ByteLevel, Split, Metaspace } kind;
  bool prefixSpace = false;                 // ByteLevel: add_prefix_space
  std::shared_ptr<icu::RegexPattern> regex; // ByteLevel (use_regex) or Split
  std::string literal;                      // Split by a string
  /// What a split does with its matches (the tokenizers library's
  /// SplitDelimiterBehavior); with `invert`, the text between them is the
  /// matches.
  enum class Behavior { Isolated, Removed, MergedWithPrevious, MergedWithNext, Contiguous };
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  std::string replacement;                  // Metaspace
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool splitWords = true; // Metaspace: split before each replacement
};

struct DecodeStep {
  enum class Kind { ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace } kind;
  std::string from, to;     // Replace; Metaspace (to is " ")
  std::string strip;        // Strip: the character
  size_t start = 0, stop = 0; // Strip: how many from each end
  bool dropFirstSpace = false; // Metaspace
};

struct TokenizerSteps {
  std::vector<NormalizeStep> normalize;
  std::vector<PreTokenizeStep> preTokenize;
  std::vector<DecodeStep> decode;
};

/// Reads "normalizer", "pre_tokenizer" and "decoder" (each null, one step,
/// or a Sequence). Throws TokenizerError.
TokenizerSteps readTokenizerSteps(const nlohmann::json &root);

std::string normalizeText(const std::vector<NormalizeStep> &steps, std::string text);
/// The words of `piece`, in order, none empty.
std::vector<TextPiece> preTokenize(const std::vector<PreTokenizeStep> &steps, TextPiece piece);
/// The bytes of the tokens' strings.
std::string decodeTokens(const std::vector<DecodeStep> &steps, std::vector<std::string> tokens);

/// The position of the first byte of `text` that is not UTF-8, or npos.
size_t invalidUtf8At(const std::string &text);

/// `text` with every `from` replaced by `to`.
std::string replaceAll(const std::string &text, const std::string &from, const std::string &to);

} // namespace ampc::cli

#endif
