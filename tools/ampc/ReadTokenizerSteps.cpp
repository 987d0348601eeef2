// Reading tokenizer.json's normalizer, pre-tokenizer and decoder into the
// typed steps of TokenizerSteps.h: each known type with its fields checked,
// any other refused by name. Regexes compile once here, on ICU, with \s
// widened to Unicode's White_Space as Oniguruma (the tokenizers library's
// engine) reads it.
#include "tools/ampc/TokenizerSteps.h"

#include <nlohmann/json.hpp>
#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>

#include "tools/ampc/Tokenizer.h"

namespace ampc::cli {
namespace {

/// GPT-2's pre-tokenizer: contractions, letters, digits, other symbols, and
/// whitespace, each run with at most one leading space.
constexpr const char *kGpt2Words =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

const nlohmann::json &field(const nlohmann::json &step, const char *key, const std::string &where) {
  auto it = step.find(key);
  if (it == step.end())
    throw TokenizerError(where + " has no '" + key + "'");
  return *it;
}

std::string stringField(const nlohmann::json &step, const char *key, const std::string &where) {
  const nlohmann::json &value = field(step, key, where);
  if (!value.is_string())
    throw TokenizerError(where + "." + key + " must be a string");
  return value.get<std::string>();
}

bool boolField(const nlohmann::json &step, const char *key, bool otherwise) {
  auto it = step.find(key);
  return it != step.end() && it->is_boolean() ? it->get<bool>() : otherwise;
}

/// A Replace's or Split's "pattern": {"String": s} or {"Regex": r}.
std::pair<std::string, bool> patternOf(const nlohmann::json &step, const std::string &where) {
  const nlohmann::json &pattern = field(step, "pattern", where);
  if (pattern.is_object() && pattern.contains("String") && pattern["String"].is_string())
    return {pattern["String"].get<std::string>(), false};
  if (pattern.is_object() && pattern.contains("Regex") && pattern["Regex"].is_string())
    return {pattern["Regex"].get<std::string>(), true};
  throw TokenizerError(where + ".pattern must be {\"String\": ...} or {\"Regex\": ...}");
}

std::shared_ptr<icu::RegexPattern> compileRegex(const std::string &pattern,
                                                const std::string &where) {
  std::string unicode = replaceAll(replaceAll(pattern, R"(\s)", R"(\p{White_Space})"), R"(\S)",
                                   R"(\P{White_Space})");
  UParseError parse;
  UErrorCode status = U_ZERO_ERROR;
  std::shared_ptr<icu::RegexPattern> regex(
      icu::RegexPattern::compile(icu::UnicodeString::fromUTF8(unicode), 0, parse, status));
  if (U_FAILURE(status) || !regex)
    throw TokenizerError(where + ": the regex '" + pattern + "' does not compile (" +
                         u_errorName(status) + ")");
  return regex;
}

/// The steps of a Sequence (under `listKey`), or the one step.
std::vector<std::pair<const nlohmann::json *, std::string>>
flatten(const nlohmann::json &step, const char *listKey, const std::string &where) {
  if (!step.is_object())
    throw TokenizerError(where + " must be an object or null");
  std::string type = stringField(step, "type", where);
  if (type != "Sequence")
    return {{&step, where}};
  const nlohmann::json &list = field(step, listKey, where);
  if (!list.is_array())
    throw TokenizerError(where + "." + listKey + " must be a list");
  std::vector<std::pair<const nlohmann::json *, std::string>> steps;
  for (size_t i = 0; i < list.size(); ++i) {
    auto inner = flatten(list[i], listKey, where + "." + listKey + "[" + std::to_string(i) + "]");
    steps.insert(steps.end(), inner.begin(), inner.end());
  }
  return steps;
}

[[noreturn]] void unsupported(const std::string &where, const std::string &type,
                              const char *supported) {
  throw TokenizerError(where + " '" + type + "' is not supported (ampc reads " + supported + ")");
}

NormalizeStep readNormalizer(const nlohmann::json &step, const std::string &where) {
  std::string type = stringField(step, "type", where);
  UErrorCode status = U_ZERO_ERROR;
  if (type == "Prepend")
    return {NormalizeStep::Kind::Prepend, "", stringField(step, "prepend", where)};
  if (type == "Replace") {
    auto [pattern, isRegex] = patternOf(step, where);
    if (isRegex)
      throw TokenizerError(where + ": a Replace by a regex is not supported, only by a String");
    return {NormalizeStep::Kind::Replace, pattern, stringField(step, "content", where)};
  }
  const icu::Normalizer2 *form = type == "NFC"    ? icu::Normalizer2::getNFCInstance(status)
                                 : type == "NFD"  ? icu::Normalizer2::getNFDInstance(status)
                                 : type == "NFKC" ? icu::Normalizer2::getNFKCInstance(status)
                                 : type == "NFKD" ? icu::Normalizer2::getNFKDInstance(status)
                                                  : nullptr;
  if (!form || U_FAILURE(status))
    unsupported(where, type, "Prepend, Replace, NFC, NFD, NFKC, NFKD and Sequence");
  return {NormalizeStep::Kind::UnicodeForm, "", "", form};
}

PreTokenizeStep::Behavior behaviorOf(const std::string &name, const std::string &where) {
  using Behavior = PreTokenizeStep::Behavior;
  for (auto [known, behavior] : {std::pair{"Isolated", Behavior::Isolated},
                                 {"Removed", Behavior::Removed},
                                 {"MergedWithPrevious", Behavior::MergedWithPrevious},
                                 {"MergedWithNext", Behavior::MergedWithNext},
                                 {"Contiguous", Behavior::Contiguous}})
    if (name == known)
      return behavior;
  unsupported(where + ".behavior", name,
              "Isolated, Removed, MergedWithPrevious, MergedWithNext and Contiguous");
}

PreTokenizeStep readPreTokenizer(const nlohmann::json &step, const std::string &where) {
  std::string type = stringField(step, "type", where);
  PreTokenizeStep out;
  if (type == "ByteLevel") {
    out.kind = PreTokenizeStep::Kind::ByteLevel;
    out.prefixSpace = boolField(step, "add_prefix_space", true);
    if (boolField(step, "use_regex", true))
      out.regex = compileRegex(kGpt2Words, where);
  } else if (type == "Split") {
    out.kind = PreTokenizeStep::Kind::Split;
    auto [pattern, isRegex] = patternOf(step, where);
    if (isRegex)
      out.regex = compileRegex(pattern, where);
    else if (pattern.empty())
      throw TokenizerError(where + ": a Split by an empty string");
    else
      out.literal = pattern;
    out.behavior = behaviorOf(stringField(step, "behavior", where), where);
    out.invert = boolField(step, "invert", false);
  } else if (type == "Digits") { // digits apart from the rest, each alone or in runs
    out.kind = PreTokenizeStep::Kind::Split;
    out.regex = compileRegex(boolField(step, "individual_digits", false) ? R"(\p{N})"
                                                                           : R"(\p{N}+)",
                             where);
  } else if (type == "Punctuation") { // Unicode's and ASCII's punctuation, each alone
    out.kind = PreTokenizeStep::Kind::Split;
    out.regex = compileRegex(R"([\p{P}!-/:-@\[-`{-~])", where);
    auto behavior = step.find("behavior");
    out.behavior = behavior != step.end() && behavior->is_string()
                       ? behaviorOf(behavior->get<std::string>(), where)
                       : PreTokenizeStep::Behavior::Isolated;
  } else if (type == "Whitespace") { // words and runs of other symbols; spaces dropped
    out.kind = PreTokenizeStep::Kind::Split;
    out.regex = compileRegex(R"(\w+|[^\w\s]+)", where);
    out.behavior = PreTokenizeStep::Behavior::Removed;
    out.invert = true;
  } else if (type == "WhitespaceSplit") {
    out.kind = PreTokenizeStep::Kind::Split;
    out.regex = compileRegex(R"(\s+)", where);
    out.behavior = PreTokenizeStep::Behavior::Removed;
  } else if (type == "Metaspace") {
    out.kind = PreTokenizeStep::Kind::Metaspace;
    out.replacement = step.contains("replacement") ? stringField(step, "replacement", where)
                                                   : "\u2581"; // "▁", the default
    if (invalidUtf8At(out.replacement) != std::string::npos || out.replacement.empty())
      throw TokenizerError(where + ".replacement must be one character");
    auto scheme = step.find("prepend_scheme");
    std::string prepend = scheme != step.end() && scheme->is_string() ? scheme->get<std::string>()
                          : boolField(step, "add_prefix_space", true) ? "always"
                                                                      : "never";
    if (prepend != "always" && prepend != "first" && prepend != "never")
      unsupported(where + ".prepend_scheme", prepend, "always, first and never");
    out.prepend = prepend == "always"  ? PreTokenizeStep::Prepend::Always
                  : prepend == "first" ? PreTokenizeStep::Prepend::First
                                       : PreTokenizeStep::Prepend::Never;
    out.splitWords = boolField(step, "split", true);
  } else {
    unsupported(where, type, "ByteLevel, Split, Metaspace, Digits, Punctuation, Whitespace, "
                             "WhitespaceSplit and Sequence");
  }
  return out;
}

DecodeStep readDecoder(const nlohmann::json &step, const std::string &where) {
  std::string type = stringField(step, "type", where);
  DecodeStep out;
  if (type == "ByteLevel") {
    out.kind = DecodeStep::Kind::ByteLevel;
  } else if (type == "ByteFallback") {
    out.kind = DecodeStep::Kind::ByteFallback;
  } else if (type == "Fuse") {
    out.kind = DecodeStep::Kind::Fuse;
  } else if (type == "Replace") {
    out.kind = DecodeStep::Kind::Replace;
    auto [pattern, isRegex] = patternOf(step, where);
    if (isRegex)
      throw TokenizerError(where + ": a Replace by a regex is not supported, only by a String");
    out.from = pattern;
    out.to = stringField(step, "content", where);
  } else if (type == "Strip") {
    out.kind = DecodeStep::Kind::Strip;
    out.strip = stringField(step, "content", where);
    const nlohmann::json &start = field(step, "start", where), &stop = field(step, "stop", where);
    if (!start.is_number_unsigned() || !stop.is_number_unsigned())
      throw TokenizerError(where + ".start and .stop must be counts");
    out.start = start.get<size_t>();
    out.stop = stop.get<size_t>();
  } else if (type == "Metaspace") {
    PreTokenizeStep like = readPreTokenizer(step, where);
    out.kind = DecodeStep::Kind::Metaspace;
    out.from = like.replacement;
    out.to = " ";
    out.dropFirstSpace = like.prepend != PreTokenizeStep::Prepend::Never;
  } else {
    unsupported(where, type, "ByteLevel, ByteFallback, Fuse, Replace, Strip, Metaspace and Sequence");
  }
  return out;
}

/// The pieces between the matches of `step`'s regex or string (and the
/// matches too unless it removes them), none empty.

} // namespace

TokenizerSteps readTokenizerSteps(const nlohmann::json &root) {
  TokenizerSteps steps;
  auto present = [&](const char *key) { return root.contains(key) && !root[key].is_null(); };
  if (present("normalizer"))
    for (auto &[step, where] : flatten(root["normalizer"], "normalizers", "normalizer"))
      steps.normalize.push_back(readNormalizer(*step, where));
  if (present("pre_tokenizer"))
    for (auto &[step, where] : flatten(root["pre_tokenizer"], "pretokenizers", "pre_tokenizer"))
      steps.preTokenize.push_back(readPreTokenizer(*step, where));
  if (present("decoder"))
    for (auto &[step, where] : flatten(root["decoder"], "decoders", "decoder"))
      steps.decode.push_back(readDecoder(*step, where));
  return steps;
}

} // namespace ampc::cli
