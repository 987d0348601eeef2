// Byte-pair encoding of one word: its characters as symbols in a linked
// list, a min-heap of the adjacent pairs that have a merge keyed by (rank,
// position), and each popped pair merged if it is still there. That is
// Hugging Face's order (lowest rank first, leftmost among equals), in
// O(n log n), so that a tokenizer without pre-tokenization (LLaMA's, where a
// whole text is one word) stays fast.
#include "tools/ampc/BytePairEncoding.h"

#include <algorithm>
#include <cstdio>
#include <queue>
#include <tuple>

#include <nlohmann/json.hpp>

namespace ampc::cli {
namespace {

constexpr int64_t kMaxId = (int64_t)1 << 31;

/// The length of the UTF-8 character that starts with `lead` (1 for a byte
/// that cannot start one; the text was checked before).
size_t utf8Length(unsigned char lead) {
  return lead < 0xc0 ? 1 : lead < 0xe0 ? 2 : lead < 0xf0 ? 3 : 4;
}

std::string optionalString(const nlohmann::json &model, const char *key) {
  auto it = model.find(key);
  if (it == model.end() || it->is_null())
    return "";
  if (!it->is_string())
    throw TokenizerError(std::string("model.") + key + " must be a string or null");
  return it->get<std::string>();
}

bool optionalBool(const nlohmann::json &model, const char *key) {
  auto it = model.find(key);
  if (it == model.end() || it->is_null())
    return false;
  if (!it->is_boolean())
    throw TokenizerError(std::string("model.") + key + " must be true or false");
  return it->get<bool>();
}

/// One entry of "merges": "a b" (older files) or ["a", "b"].
std::pair<std::string, std::string> mergeParts(const nlohmann::json &entry, size_t rank) {
  std::string where = "model.merges[" + std::to_string(rank) + "]";
  if (entry.is_string()) {
    const std::string &line = entry.get_ref<const std::string &>();
    size_t space = line.find(' ');
    if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
      throw TokenizerError(where + " '" + line + "' is not two tokens split by one space");
    return {line.substr(0, space), line.substr(space + 1)};
  }
  if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string())
    return {entry[0].get<std::string>(), entry[1].get<std::string>()};
  throw TokenizerError(where + " is neither \"a b\" nor [\"a\", \"b\"]");
}

} // namespace

BytePairEncoding::BytePairEncoding(const nlohmann::json &model) {
  if (!optionalString(model, "continuing_subword_prefix").empty() ||
      !optionalString(model, "end_of_word_suffix").empty())
    throw TokenizerError("a BPE model with continuing_subword_prefix or end_of_word_suffix is "
                         "not supported (GPT-2's and LLaMA's leave both empty)");
  if (auto it = model.find("dropout"); it != model.end() && !it->is_null() &&
                                       !(it->is_number() && it->get<double>() == 0))
    throw TokenizerError("BPE dropout is for training a tokenizer: set model.dropout to null");
  byteFallback_ = optionalBool(model, "byte_fallback");
  fuseUnknown_ = optionalBool(model, "fuse_unk");
  ignoreMerges_ = optionalBool(model, "ignore_merges");

  auto vocab = model.find("vocab");
  if (vocab == model.end() || !vocab->is_object())
    throw TokenizerError("model.vocab must be an object of tokens and their ids");
  for (auto &[token, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() >= kMaxId)
      throw TokenizerError("model.vocab['" + token + "'] must be an id in [0, 2^31)");
    int64_t value = id.get<int64_t>();
    auto [at, added] = tokens_.emplace(value, token);
    if (!added)
      throw TokenizerError("model.vocab gives id " + std::to_string(value) + " to both '" +
                           at->second + "' and '" + token + "'");
    size_ = std::max(size_, value + 1);
    vocab_.emplace(token, value);
  }

  auto merges = model.find("merges");
  if (merges != model.end() && !merges->is_null() && !merges->is_array())
    throw TokenizerError("model.merges must be a list");
  if (merges != model.end() && merges->is_array())
    for (size_t rank = 0; rank < merges->size(); ++rank) {
      auto [left, right] = mergeParts((*merges)[rank], rank);
      std::optional<int64_t> l = idOf(left), r = idOf(right), merged = idOf(left + right);
      if (!l || !r || !merged)
        throw TokenizerError("model.merges[" + std::to_string(rank) + "] ('" + left + "' '" +
                             right + "'): '" + (!l ? left : !r ? right : left + right) +
                             "' is not in the vocabulary");
      merges_[pairKey(*l, *r)] = {(int32_t)rank, (int32_t)*merged}; // a repeated pair: the last wins
    }

  std::string unknown = optionalString(model, "unk_token");
  if (!unknown.empty()) {
    unknown_ = idOf(unknown);
    if (!unknown_)
      throw TokenizerError("model.unk_token '" + unknown + "' is not in the vocabulary");
  }
}

const std::string *BytePairEncoding::tokenOf(int64_t id) const {
  auto it = tokens_.find(id);
  return it == tokens_.end() ? nullptr : &it->second;
}

std::optional<int64_t> BytePairEncoding::idOf(const std::string &token) const {
  auto it = vocab_.find(token);
  return it == vocab_.end() ? std::nullopt : std::optional<int64_t>(it->second);
}

void BytePairEncoding::appendUnknown(const std::string &character,
                                     std::vector<int64_t> &symbols) const {
  if (byteFallback_) {
    std::vector<int64_t> bytes;
    for (unsigned char b : character) {
      char name[8];
      std::snprintf(name, sizeof name, "<0x%02X>", b);
      if (std::optional<int64_t> id = idOf(name))
        bytes.push_back(*id);
    }
    if (bytes.size() == character.size()) {
      symbols.insert(symbols.end(), bytes.begin(), bytes.end());
      return;
    }
  }
  if (!unknown_)
    throw TokenizerError("the character '" + character +
                         "' is not in the tokenizer's vocabulary, which has no unk_token" +
                         (byteFallback_ ? "" : " and no byte_fallback"));
  symbols.push_back(*unknown_);
}

void BytePairEncoding::encodeWord(const std::string &word, std::vector<int64_t> &ids) const {
  if (word.empty())
    return;
  if (ignoreMerges_)
    if (std::optional<int64_t> whole = idOf(word)) {
      ids.push_back(*whole);
      return;
    }
  std::vector<int64_t> symbols;
  bool lastUnknown = false;
  for (size_t at = 0; at < word.size();) {
    size_t length = std::min(utf8Length((unsigned char)word[at]), word.size() - at);
    std::string character = word.substr(at, length);
    at += length;
    if (std::optional<int64_t> id = idOf(character)) {
      symbols.push_back(*id);
      lastUnknown = false;
      continue;
    }
    size_t before = symbols.size();
    appendUnknown(character, symbols);
    bool isUnknown = unknown_ && symbols.size() == before + 1 && symbols.back() == *unknown_;
    if (isUnknown && lastUnknown && fuseUnknown_)
      symbols.pop_back();
    lastUnknown = isUnknown;
  }

  // 32-bit fields: ids are below 2^31 and a word below 2^30 bytes.
  struct Symbol {
    int32_t id, prev, next;
    bool alive;
  };
  std::vector<Symbol> list(symbols.size());
  for (size_t i = 0; i < symbols.size(); ++i)
    list[i] = {(int32_t)symbols[i], (int32_t)i - 1, i + 1 < symbols.size() ? (int32_t)i + 1 : -1,
               true};
  symbols = {};
  using Candidate = std::tuple<int32_t, int32_t, int32_t>; // rank, position, result
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
  auto offer = [&](int32_t left) {
    int32_t right = list[left].next;
    if (right < 0)
      return;
    auto it = merges_.find(pairKey(list[left].id, list[right].id));
    if (it != merges_.end())
      heap.emplace(it->second.rank, left, it->second.result);
  };
  for (size_t i = 0; i + 1 < list.size(); ++i)
    offer((int32_t)i);
  while (!heap.empty()) {
    auto [rank, left, result] = heap.top();
    heap.pop();
    int32_t right = list[left].next;
    if (!list[left].alive || right < 0)
      continue;
    auto it = merges_.find(pairKey(list[left].id, list[right].id));
    if (it == merges_.end() || it->second.rank != rank)
      continue; // the pair at `left` changed since it was offered
    list[left].id = result;
    list[right].alive = false;
    list[left].next = list[right].next;
    if (list[left].next >= 0)
      list[list[left].next].prev = left;
    if (list[left].prev >= 0)
      offer(list[left].prev);
    offer(left);
  }
  for (const Symbol &s : list)
    if (s.alive)
      ids.push_back(s.id);
}

} // namespace ampc::cli
