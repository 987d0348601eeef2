// Tokenizers (tools/ampc/Tokenizer.h): the BPE merge order, unknown
// characters, added tokens, post-processors and decoders, on tokenizer.json
// files small enough to reason about by hand. tests/lit/cli/tokenizer.test
// holds trained vocabularies to an independent reference.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tools/ampc/Tokenizer.h"
#include "tools/ampc/TokenizerSteps.h"

using namespace ampc::cli;
using nlohmann::json;
using Ids = std::vector<int64_t>;

namespace {

/// A character-level BPE over a, b, c, "▁" and d with `merges`, no
/// pre-tokenizer, and the rest of the file from `extra`.
std::unique_ptr<Tokenizer> small(json merges, json extra = json::object(), json model = {}) {
  json vocab = {{"a", 0}, {"b", 1}, {"c", 2}, {"\u2581", 3}, {"d", 4},
                {"aa", 5}, {"ab", 6}, {"abc", 7}, {"<unk>", 8}, {"<0x0A>", 9}};
  json root = extra;
  root["model"] = {{"type", "BPE"}, {"vocab", vocab}, {"merges", merges}};
  for (auto &[key, value] : model.items())
    root["model"][key] = value;
  return parseTokenizer(root.dump());
}

std::string errorOf(const std::string &text) {
  try {
    parseTokenizer(text);
  } catch (const TokenizerError &e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST(Tokenizer, BytesAreTheirOwnTokens) {
  auto bytes = byteTokenizer();
  std::string text = "h\xc3\xa9\xff\n";
  Ids ids = bytes->encode(text, true);
  EXPECT_EQ(ids, (Ids{'h', 0xc3, 0xa9, 0xff, '\n'}));
  EXPECT_EQ(bytes->decode(ids), text);
  EXPECT_THROW(bytes->decode({256}), TokenizerError);
}

TEST(Tokenizer, MergesTheLowestRankFirstAndTheLeftmostAmongEquals) {
  auto t = small({"a b", "a a", "ab c"});
  EXPECT_EQ(t->encode("aaa", false), (Ids{5, 0})); // "aa" "a", not "a" "aa"
  EXPECT_EQ(t->encode("aab", false), (Ids{0, 6})); // "a b" outranks "a a"
  EXPECT_EQ(t->encode("abcab", false), (Ids{7, 6}));
  // The same merges with "a a" first: the pair at the left wins again.
  auto u = small({"a a", "a b"});
  EXPECT_EQ(u->encode("aab", false), (Ids{5, 1}));
  EXPECT_EQ(u->encode("aaaa", false), (Ids{5, 5}));
}

TEST(Tokenizer, UnknownCharactersTakeBytesOrTheUnknownToken) {
  auto fallback = small(json::array(), {}, {{"byte_fallback", true}, {"unk_token", "<unk>"}});
  EXPECT_EQ(fallback->encode("a\nb", false), (Ids{0, 9, 1})); // <0x0A> is in the vocabulary
  EXPECT_EQ(fallback->encode("a\xc3\xa9", false), (Ids{0, 8})); // <0xC3> is not: <unk>
  auto fused = small(json::array(), {}, {{"fuse_unk", true}, {"unk_token", "<unk>"}});
  EXPECT_EQ(fused->encode("axyzb", false), (Ids{0, 8, 1}));
  auto unfused = small(json::array(), {}, {{"unk_token", "<unk>"}});
  EXPECT_EQ(unfused->encode("axyb", false), (Ids{0, 8, 8, 1}));
  auto none = small(json::array());
  EXPECT_THROW(none->encode("x", false), TokenizerError);
}

TEST(Tokenizer, AddedTokensSplitTheTextAsWrittenAndStripTheirSpaces) {
  json added = json::array({{{"id", 10}, {"content", "<s>"}, {"special", true}},
                            {{"id", 11}, {"content", "<s>x"}, {"special", true}},
                            {{"id", 12}, {"content", "[M]"}, {"lstrip", true}, {"rstrip", true}}});
  auto t = small({"a b"}, {{"added_tokens", added}});
  EXPECT_EQ(t->size(), 13);
  EXPECT_EQ(t->encode("ab<s>ab", false), (Ids{6, 10, 6}));
  EXPECT_EQ(t->encode("<s>x<s>", false), (Ids{11, 10})); // the longest at the same place
  EXPECT_EQ(t->encode("a  [M]  b", false), (Ids{0, 12, 1}));
  EXPECT_EQ(t->decode({6, 10, 6}), "ab<s>ab");
}

TEST(Tokenizer, PostProcessorsAddTheirSpecialTokens) {
  json added = json::array({{{"id", 10}, {"content", "<s>"}}, {{"id", 11}, {"content", "</s>"}}});
  json specials = {{"<s>", {{"id", "<s>"}, {"ids", {10}}, {"tokens", {"<s>"}}}},
                   {"</s>", {{"id", "</s>"}, {"ids", {11}}, {"tokens", {"</s>"}}}}};
  json single = json::array({{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}},
                             {{"Sequence", {{"id", "A"}, {"type_id", 0}}}},
                             {{"SpecialToken", {{"id", "</s>"}, {"type_id", 0}}}}});
  auto t = small(json::array(), {{"added_tokens", added},
                                  {"post_processor", {{"type", "TemplateProcessing"},
                                                      {"single", single},
                                                      {"special_tokens", specials}}}});
  EXPECT_EQ(t->encode("ab", true), (Ids{10, 0, 1, 11}));
  EXPECT_EQ(t->encode("ab", false), (Ids{0, 1}));
  auto roberta = small(json::array(), {{"added_tokens", added},
                                       {"post_processor", {{"type", "RobertaProcessing"},
                                                           {"cls", {"<s>", 10}},
                                                           {"sep", {"</s>", 11}}}}});
  EXPECT_EQ(roberta->encode("c", true), (Ids{10, 2, 11}));
  // A template's special token missing from special_tokens: the added token
  // of that content.
  json bare = {{"type", "TemplateProcessing"},
               {"single", json::array({{{"SpecialToken", {{"id", "</s>"}}}},
                                       {{"Sequence", {{"id", "A"}}}}})}};
  auto unlisted = small(json::array(), {{"added_tokens", added}, {"post_processor", bare}});
  EXPECT_EQ(unlisted->encode("a", true), (Ids{11, 0}));
}

TEST(Tokenizer, ByteLevelDecodesEveryByteBack) {
  // Every byte's character as a token, and one merge of two of them.
  json vocab = json::object();
  std::string byteChars[256]; // GPT-2's bytes_to_unicode, as UTF-8
  for (int b = 0, next = 256; b < 256; ++b) {
    bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
    int c = printable ? b : next++;
    byteChars[b] = c < 0x80 ? std::string(1, (char)c)
                            : std::string{(char)(0xc0 | c >> 6), (char)(0x80 | (c & 0x3f))};
    vocab[byteChars[b]] = b;
  }
  vocab[byteChars[' '] + "t"] = 256;
  json byteLevel = {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}};
  json root = {{"pre_tokenizer", byteLevel},
               {"decoder", byteLevel},
               {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", {byteChars[' '] + " t"}}}}};
  auto t = parseTokenizer(root.dump());
  std::string text = "it's  a t\xc3\xa9st\n\t\x01\x7f 12 \xf0\x9f\x98\x80 ";
  Ids ids = t->encode(text, true);
  EXPECT_EQ(t->decode(ids), text);
  EXPECT_EQ(t->encode(" t", false), (Ids{256}));
  EXPECT_EQ(t->encode("it's", false), (Ids{'i', 't', '\'', 's'}));
}

TEST(Tokenizer, MetaspaceAndSentencePieceDecoders) {
  json meta = {{"type", "Metaspace"}, {"replacement", "\u2581"}, {"prepend_scheme", "first"},
               {"split", true}};
  json vocab = {{"\u2581a", 0}, {"\u2581b", 1}, {"\u2581", 2}, {"a", 3}, {"b", 4}, {"<s>", 5}};
  json model = {{"type", "BPE"}, {"vocab", vocab}, {"merges", {"\u2581 a", "\u2581 b"}}};
  json added = json::array({{{"id", 5}, {"content", "<s>"}}});
  auto t = parseTokenizer(
      json({{"pre_tokenizer", meta}, {"decoder", meta}, {"model", model}, {"added_tokens", added}})
          .dump());
  EXPECT_EQ(t->encode("a b", false), (Ids{0, 1}));
  EXPECT_EQ(t->encode("<s>a", false), (Ids{5, 3})); // "first": not after an added token
  EXPECT_EQ(t->decode({0, 1}), "a b");
  meta.erase("replacement"); // "▁" by default
  auto implied = parseTokenizer(json({{"pre_tokenizer", meta}, {"model", model}}).dump());
  EXPECT_EQ(implied->encode("a b", false), (Ids{0, 1}));
  // LLaMA 2's older decoder: Replace, ByteFallback, Fuse, Strip.
  json decoders = json::array({{{"type", "Replace"}, {"pattern", {{"String", "\u2581"}}}, {"content", " "}},
                               {{"type", "ByteFallback"}},
                               {{"type", "Fuse"}},
                               {{"type", "Strip"}, {"content", " "}, {"start", 1}, {"stop", 0}}});
  json vocab2 = {{"\u2581a", 0}, {"<0xC3>", 1}, {"<0xA9>", 2}, {"<s>", 3}};
  json root = {{"decoder", {{"type", "Sequence"}, {"decoders", decoders}}},
               {"model", {{"type", "BPE"}, {"vocab", vocab2}, {"merges", json::array()}}}};
  auto sp = parseTokenizer(root.dump());
  EXPECT_EQ(sp->decode({0, 1, 2, 0}), "a\xc3\xa9 a");
  EXPECT_EQ(sp->decode({3, 0}), "<s> a");
  EXPECT_THROW(sp->decode({7}), TokenizerError);
}

TEST(Tokenizer, RefusesWhatItCannotRead) {
  EXPECT_EQ(errorOf("[1, 2"), "is not JSON");
  EXPECT_EQ(errorOf("{}"), "no \"model\" object: not a Hugging Face tokenizer.json");
  EXPECT_EQ(errorOf(R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 0}}})"),
            "model.vocab gives id 0 to both 'a' and 'b'");
  EXPECT_EQ(errorOf(R"({"model": {"type": "BPE", "vocab": {"a": -1}}})"),
            "model.vocab['a'] must be an id in [0, 2^31)");
  EXPECT_EQ(errorOf(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "unk_token": "?"}})"),
            "model.unk_token '?' is not in the vocabulary");
  EXPECT_EQ(errorOf(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a  a"]}})"),
            "model.merges[0] 'a  a' is not two tokens split by one space");
  EXPECT_EQ(errorOf(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "dropout": 0.1}})"),
            "BPE dropout is for training a tokenizer: set model.dropout to null");
  EXPECT_NE(errorOf(R"({"model": {"vocab": {}}, "pre_tokenizer": {"type": "Split",
               "pattern": {"Regex": "("}, "behavior": "Isolated"}})")
                .find("does not compile"),
            std::string::npos);
  EXPECT_EQ(errorOf(R"({"model": {"vocab": {}}, "normalizer": {"type": "Sequence",
               "normalizers": [{"type": "Lowercase"}]}})"),
            "normalizer.normalizers[0] 'Lowercase' is not supported (ampc reads Prepend, Replace, "
            "NFC, NFD, NFKC, NFKD and Sequence)");
  EXPECT_EQ(errorOf(R"({"model": {"vocab": {}}, "post_processor": {"type": "TemplateProcessing",
               "single": [{"SpecialToken": {"id": "<s>"}}], "special_tokens": {"<s>": {}}}})"),
            "post_processor: special token '<s>' has no ids in special_tokens");
  EXPECT_EQ(errorOf(R"({"model": {"vocab": {}}, "added_tokens": [{"id": 1, "content": ""}]})"),
            "added_tokens[0] needs an id in [0, 2^31) and a non-empty content");
}

TEST(Tokenizer, SplitBehavesAsTheTokenizersLibrarysDelimiterBehaviors) {
  // The tokenizers library's documented example: "the-final--countdown" by "-".
  auto words = [](json preTokenizer, const std::string &text) {
    TokenizerSteps steps = readTokenizerSteps({{"pre_tokenizer", preTokenizer}});
    std::vector<std::string> out;
    for (const TextPiece &p : preTokenize(steps.preTokenize, {text, true}))
      out.push_back(p.text);
    return out;
  };
  auto dash = [&](const char *behavior, bool invert = false) {
    return words({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", behavior},
                  {"invert", invert}},
                 "the-final--countdown");
  };
  using Words = std::vector<std::string>;
  EXPECT_EQ(dash("Removed"), (Words{"the", "final", "countdown"}));
  EXPECT_EQ(dash("Isolated"), (Words{"the", "-", "final", "-", "-", "countdown"}));
  EXPECT_EQ(dash("MergedWithPrevious"), (Words{"the-", "final-", "-", "countdown"}));
  EXPECT_EQ(dash("MergedWithNext"), (Words{"the", "-final", "-", "-countdown"}));
  EXPECT_EQ(dash("Contiguous"), (Words{"the", "-", "final", "--", "countdown"}));
  EXPECT_EQ(dash("Removed", /*invert=*/true), (Words{"-", "-", "-"}));
  EXPECT_EQ(words({{"type", "Digits"}, {"individual_digits", true}}, "a123b"),
            (Words{"a", "1", "2", "3", "b"}));
  EXPECT_EQ(words({{"type", "Digits"}}, "a123b"), (Words{"a", "123", "b"}));
  EXPECT_EQ(words({{"type", "Whitespace"}}, "Hey man!  How's it?"),
            (Words{"Hey", "man", "!", "How", "'", "s", "it", "?"}));
  EXPECT_EQ(words({{"type", "WhitespaceSplit"}}, "Hey man!\n x"), (Words{"Hey", "man!", "x"}));
  EXPECT_EQ(words({{"type", "Punctuation"}}, "a,b$c"), (Words{"a", ",", "b", "$", "c"}));
  EXPECT_THROW(words({{"type", "Split"}, {"pattern", {{"String", "-"}}}, {"behavior", "Odd"}}, "x"),
               TokenizerError);
}
