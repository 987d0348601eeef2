// The byte tokenizer, and a Hugging Face tokenizer.json as the `tokenizers`
// library runs it: the text split at its added tokens (matched as written),
// each other segment normalized, pre-tokenized into words and each word
// byte-pair encoded; then the post-processor's special tokens around them.
// Decoding joins the tokens' strings through the decoder.
#include "tools/ampc/Tokenizer.h"

#include <algorithm>
#include <map>

#include <nlohmann/json.hpp>

#include "tools/ampc/BytePairEncoding.h"
#include "tools/ampc/TokenizerSteps.h"

namespace ampc::cli {
namespace {

/// ICU's strings and our UTF-8 checks index with int32.
constexpr size_t kMaxText = (size_t)1 << 30;

class ByteTokenizer final : public Tokenizer {
public:
  std::vector<int64_t> encode(const std::string &text, bool) const override {
    std::vector<int64_t> ids;
    for (unsigned char b : text)
      ids.push_back(b);
    return ids;
  }
  std::string decode(const std::vector<int64_t> &ids) const override {
    std::string text;
    for (int64_t id : ids) {
      if (id < 0 || id > 255)
        throw TokenizerError("token " + std::to_string(id) + " is not a byte");
      text += (char)id;
    }
    return text;
  }
  int64_t size() const override { return 256; }
};

struct AddedToken {
  int64_t id;
  std::string content;
  bool lstrip, rstrip;
};

/// `object[key]`, or null where `object` is no object or lacks the key.
const nlohmann::json *member(const nlohmann::json &object, const std::string &key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

bool isSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

const nlohmann::json &modelOf(const nlohmann::json &root) {
  if (!root.is_object() || !root.contains("model") || !root["model"].is_object())
    throw TokenizerError("no \"model\" object: not a Hugging Face tokenizer.json");
  const nlohmann::json &model = root["model"];
  const nlohmann::json *typeField = member(model, "type");
  std::string type = typeField && typeField->is_string() ? typeField->get<std::string>() : "BPE";
  if (type != "BPE")
    throw TokenizerError("model type '" + type +
                         "' is not supported: ampc reads BPE tokenizers (GPT-2's, LLaMA's, "
                         "Mistral's, Qwen's); leave out --tokenizer for bytes");
  return model;
}

class HuggingFaceTokenizer final : public Tokenizer {
public:
  explicit HuggingFaceTokenizer(const nlohmann::json &root)
      : model_(modelOf(root)), steps_(readTokenizerSteps(root)), size_(model_.size()) {
    readAddedTokens(root);
    if (root.contains("post_processor") && !root["post_processor"].is_null())
      readPostProcessor(root["post_processor"], "post_processor");
  }

  std::vector<int64_t> encode(const std::string &text, bool addSpecial) const override {
    if (text.size() > kMaxText)
      throw TokenizerError("the text is over 1 GiB: split it into several files");
    if (size_t bad = invalidUtf8At(text); bad != std::string::npos)
      throw TokenizerError("the text is not UTF-8 at byte " + std::to_string(bad) +
                           ": a BPE tokenizer reads UTF-8 (without --tokenizer, any bytes)");
    std::vector<int64_t> ids;
    if (addSpecial)
      ids = prefix_;
    std::vector<size_t> next(added_.size()); // each added token's first place at or after `from`
    for (size_t i = 0; i < added_.size(); ++i)
      next[i] = text.find(added_[i].content);
    size_t from = 0;
    while (true) {
      size_t at = std::string::npos;
      const AddedToken *found = nullptr;
      for (size_t i = 0; i < added_.size(); ++i) {
        if (next[i] != std::string::npos && next[i] < from)
          next[i] = text.find(added_[i].content, from);
        if (next[i] == std::string::npos)
          continue;
        if (!found || next[i] < at ||
            (next[i] == at && added_[i].content.size() > found->content.size())) {
          at = next[i];
          found = &added_[i];
        }
      }
      size_t segmentEnd = found ? at : text.size();
      if (found && found->lstrip)
        while (segmentEnd > from && isSpace(text[segmentEnd - 1]))
          --segmentEnd;
      encodeSegment(text.substr(from, segmentEnd - from), from == 0, ids);
      if (!found)
        break;
      ids.push_back(found->id);
      from = at + found->content.size();
      if (found->rstrip)
        while (from < text.size() && isSpace(text[from]))
          ++from;
    }
    if (addSpecial)
      ids.insert(ids.end(), suffix_.begin(), suffix_.end());
    return ids;
  }

  std::string decode(const std::vector<int64_t> &ids) const override {
    std::vector<std::string> tokens;
    for (int64_t id : ids) {
      if (auto it = addedById_.find(id); it != addedById_.end())
        tokens.push_back(it->second);
      else if (const std::string *token = model_.tokenOf(id))
        tokens.push_back(*token);
      else
        throw TokenizerError("token " + std::to_string(id) + " is not in the vocabulary");
    }
    return decodeTokens(steps_.decode, std::move(tokens));
  }

  int64_t size() const override { return size_; }

private:
  void encodeSegment(const std::string &segment, bool atStart, std::vector<int64_t> &ids) const {
    std::string normal = normalizeText(steps_.normalize, segment);
    for (const TextPiece &word : preTokenize(steps_.preTokenize, {normal, atStart}))
      model_.encodeWord(word.text, ids);
  }

  void readAddedTokens(const nlohmann::json &root) {
    if (!root.contains("added_tokens") || root["added_tokens"].is_null())
      return;
    const nlohmann::json &list = root["added_tokens"];
    if (!list.is_array())
      throw TokenizerError("added_tokens must be a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const nlohmann::json &t = list[i];
      std::string where = "added_tokens[" + std::to_string(i) + "]";
      if (!t.is_object() || !t.contains("id") || !t["id"].is_number_unsigned() ||
          t["id"].get<uint64_t>() >= ((uint64_t)1 << 31) || !t.contains("content") ||
          !t["content"].is_string() || t["content"].get<std::string>().empty())
        throw TokenizerError(where + " needs an id in [0, 2^31) and a non-empty content");
      auto flag = [&](const char *key) {
        const nlohmann::json *value = member(t, key);
        return value && value->is_boolean() && value->get<bool>();
      };
      AddedToken token{t["id"].get<int64_t>(), t["content"].get<std::string>(), flag("lstrip"),
                       flag("rstrip")};
      size_ = std::max(size_, token.id + 1);
      addedById_[token.id] = token.content;
      added_.push_back(std::move(token));
    }
  }

  /// The ids of a special token named in a post-processor.
  std::vector<int64_t> specialIds(const nlohmann::json *specials, const std::string &name,
                                  const std::string &where) const {
    const nlohmann::json *token = specials ? member(*specials, name) : nullptr;
    const nlohmann::json *ids = token ? member(*token, "ids") : nullptr;
    if (!token) // not listed: the added token of that content, if one is
      for (const AddedToken &added : added_)
        if (added.content == name)
          return {added.id};
    if (!ids || !ids->is_array())
      throw TokenizerError(where + ": special token '" + name + "' has no ids in special_tokens");
    std::vector<int64_t> out;
    for (const nlohmann::json &id : *ids) {
      if (!id.is_number_unsigned() || id.get<uint64_t>() >= (uint64_t)size_)
        throw TokenizerError(where + ": special token '" + name +
                             "' has an id outside the vocabulary");
      out.push_back(id.get<int64_t>());
    }
    return out;
  }

  void readPostProcessor(const nlohmann::json &step, const std::string &where) {
    const nlohmann::json *typeField = member(step, "type");
    std::string type = typeField && typeField->is_string() ? typeField->get<std::string>() : "";
    if (type == "ByteLevel")
      return; // it moves offsets only
    const nlohmann::json *processors = member(step, "processors");
    if (type == "Sequence" && processors && processors->is_array()) {
      for (size_t i = 0; i < processors->size(); ++i)
        readPostProcessor((*processors)[i], where + ".processors[" + std::to_string(i) + "]");
      return;
    }
    const nlohmann::json *single = member(step, "single");
    if (type == "TemplateProcessing" && single && single->is_array()) {
      bool afterSequence = false;
      for (const nlohmann::json &item : *single) {
        const nlohmann::json *special = member(item, "SpecialToken");
        const nlohmann::json *name = special ? member(*special, "id") : nullptr;
        if (member(item, "Sequence")) {
          afterSequence = true;
        } else if (name && name->is_string()) {
          std::vector<int64_t> ids = specialIds(member(step, "special_tokens"), *name, where);
          std::vector<int64_t> &into = afterSequence ? suffix_ : prefix_;
          into.insert(into.end(), ids.begin(), ids.end());
        } else {
          throw TokenizerError(where + ".single holds an item that is neither Sequence nor "
                                       "SpecialToken");
        }
      }
      return;
    }
    const nlohmann::json *cls = member(step, "cls"), *sep = member(step, "sep");
    auto idOf = [&](const nlohmann::json *pair) -> int64_t {
      if (!pair || !pair->is_array() || pair->size() != 2 || !(*pair)[1].is_number_unsigned() ||
          (*pair)[1].get<uint64_t>() >= (uint64_t)size_)
        throw TokenizerError(where + ": cls and sep must be [token, id] of the vocabulary");
      return (*pair)[1].get<int64_t>();
    };
    if (type == "BertProcessing" || type == "RobertaProcessing") {
      prefix_.push_back(idOf(cls));
      suffix_.push_back(idOf(sep));
      return;
    }
    throw TokenizerError(where + " '" + type +
                         "' is not supported (ampc reads ByteLevel, TemplateProcessing, "
                         "BertProcessing, RobertaProcessing and Sequence)");
  }

  BytePairEncoding model_;
  TokenizerSteps steps_;
  int64_t size_;
  std::vector<AddedToken> added_;
  std::map<int64_t, std::string> addedById_;
  std::vector<int64_t> prefix_, suffix_;
};

} // namespace

std::unique_ptr<Tokenizer> byteTokenizer() { return std::make_unique<ByteTokenizer>(); }

std::unique_ptr<Tokenizer> parseTokenizer(const std::string &json) {
  nlohmann::json root = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded())
    throw TokenizerError("is not JSON");
  try {
    return std::make_unique<HuggingFaceTokenizer>(root);
  } catch (const nlohmann::json::exception &e) {
    throw TokenizerError(std::string("a field of the wrong type (") + e.what() + ")");
  }
}

} // namespace ampc::cli
