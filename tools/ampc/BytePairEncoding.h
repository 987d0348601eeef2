// The BPE model of a Hugging Face tokenizer.json ("model": {"type": "BPE"}):
// a vocabulary and ranked merges that turn one pre-tokenized word into
// token ids, as GPT-2's and LLaMA's tokenizers do. See docs/gpt.md,
// "Tokenizers".
#ifndef AMPC_TOOLS_AMPC_BYTEPAIRENCODING_H
#define AMPC_TOOLS_AMPC_BYTEPAIRENCODING_H

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tools/ampc/Tokenizer.h"

namespace ampc::cli {

class BytePairEncoding {
public:
  /// Reads and checks the "model" object: every merge's parts and result in
  /// the vocabulary, ids unique and non-negative. Throws TokenizerError.
  explicit BytePairEncoding(const nlohmann::json &model);

  /// Appends the ids of `word` (UTF-8): its characters, merged pair by pair,
  /// the lowest-ranked pair first and the leftmost among equals, as
  /// Hugging Face's BPE does. A character outside the vocabulary becomes
  /// its bytes' <0xXX> tokens (byte_fallback) or the unknown token (fused
  /// with a neighbouring one under fuse_unk); without either it is an error.
  void encodeWord(const std::string &word, std::vector<int64_t> &ids) const;

  /// One more than the largest id.
  int64_t size() const { return size_; }
  /// The token of `id`, or null for an id the vocabulary skips.
  const std::string *tokenOf(int64_t id) const;
  std::optional<int64_t> idOf(const std::string &token) const;

private:
  struct Merge {
    int32_t rank, result;
  };
  static uint64_t pairKey(int64_t left, int64_t right) {
    return (uint64_t)left << 32 | (uint64_t)right;
  }
  /// Appends the ids of one character missing from the vocabulary.
  void appendUnknown(const std::string &character, std::vector<int64_t> &symbols) const;

  std::unordered_map<std::string, int64_t> vocab_;
  /// By id: a map, as a malformed file may give an id far beyond its count.
  std::unordered_map<int64_t, std::string> tokens_;
  int64_t size_ = 0;
  std::unordered_map<uint64_t, Merge> merges_;
  std::optional<int64_t> unknown_;
  bool byteFallback_ = false, fuseUnknown_ = false, ignoreMerges_ = false;
};

} // namespace ampc::cli

#endif
