// Running the typed tokenizer steps as the `tokenizers` library runs them:
// normalizing, splitting into words (regex matches on ICU), the byte-level
// map (GPT-2's bytes_to_unicode: each byte a printable character, so that a
// BPE over characters covers every byte), and the decoders.
#include "tools/ampc/TokenizerSteps.h"

#include <algorithm>
#include <unordered_map>

#include <unicode/normalizer2.h>
#include <unicode/regex.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include "tools/ampc/Tokenizer.h"

namespace ampc::cli {
namespace {

void appendUtf8(std::string &out, UChar32 c) {
  char bytes[4];
  int32_t length = 0;
  U8_APPEND_UNSAFE(bytes, length, c);
  out.append(bytes, length);
}

struct ByteLevelMap {
  std::string charOf[256];
  std::unordered_map<UChar32, char> byteOf;
  ByteLevelMap() {
    UChar32 next = 256;
    for (int b = 0; b < 256; ++b) {
      bool printable = (b >= '!' && b <= '~') || (b >= 0xa1 && b <= 0xac) || b >= 0xae;
      UChar32 c = printable ? b : next++;
      appendUtf8(charOf[b], c);
      byteOf[c] = (char)b;
    }
  }
};

const ByteLevelMap &byteLevelMap() {
  static const ByteLevelMap map;
  return map;
}

/// A piece of text cut at a split's matches: a match or the text between.
struct Segment {
  std::string text;
  bool match, first; // first: it starts the piece
};

/// `piece` as matches of `step`'s regex or string and the text between
/// them, in order, none empty.
std::vector<Segment> segments(const PreTokenizeStep &step, const std::string &piece) {
  std::vector<Segment> out;
  auto emit = [&](std::string text, bool match, bool first) {
    if (!text.empty())
      out.push_back({std::move(text), match, first});
  };
  if (!step.regex) {
    size_t last = 0;
    for (size_t at = piece.find(step.literal); at != std::string::npos;
         at = piece.find(step.literal, last)) {
      emit(piece.substr(last, at - last), false, last == 0);
      emit(step.literal, true, at == 0);
      last = at + step.literal.size();
    }
    emit(piece.substr(last), false, last == 0);
    return out;
  }
  icu::UnicodeString text = icu::UnicodeString::fromUTF8(piece);
  UErrorCode status = U_ZERO_ERROR;
  std::unique_ptr<icu::RegexMatcher> matcher(step.regex->matcher(text, status));
  auto utf8 = [&](int32_t from, int32_t to) {
    std::string s;
    text.tempSubStringBetween(from, to).toUTF8String(s);
    return s;
  };
  int32_t last = 0;
  while (U_SUCCESS(status) && matcher->find(status)) {
    int32_t start = matcher->start(status), end = matcher->end(status);
    emit(utf8(last, start), false, last == 0);
    emit(utf8(start, end), true, start == 0);
    last = end;
  }
  if (U_FAILURE(status))
    throw TokenizerError(std::string("the pre-tokenizer's regex failed on the text (") +
                         u_errorName(status) + ")");
  emit(utf8(last, text.length()), false, last == 0);
  return out;
}

/// The words of `piece` after a split: its segments (matches and gaps
/// swapped under `invert`) kept, dropped or merged as the behavior says,
/// in the `tokenizers` library's order of folding.
std::vector<TextPiece> split(const PreTokenizeStep &step, const TextPiece &piece) {
  using Behavior = PreTokenizeStep::Behavior;
  std::vector<Segment> parts = segments(step, piece.text);
  if (step.invert)
    for (Segment &p : parts)
      p.match = !p.match;
  bool reversed = step.behavior == Behavior::MergedWithNext;
  if (reversed)
    std::reverse(parts.begin(), parts.end());
  std::vector<Segment> kept;
  bool previousMatch = false;
  for (Segment &p : parts) {
    bool merge = !kept.empty() &&
                 (step.behavior == Behavior::Contiguous ? p.match == previousMatch
                  : step.behavior == Behavior::MergedWithPrevious ||
                          step.behavior == Behavior::MergedWithNext
                      ? p.match && !previousMatch
                      : false);
    previousMatch = p.match;
    if (step.behavior == Behavior::Removed && p.match)
      continue;
    if (!merge) {
      kept.push_back(std::move(p));
    } else if (reversed) {
      kept.back().text.insert(0, p.text);
      kept.back().first = p.first;
    } else {
      kept.back().text += p.text;
    }
  }
  if (reversed)
    std::reverse(kept.begin(), kept.end());
  std::vector<TextPiece> out;
  for (Segment &k : kept)
    out.push_back({std::move(k.text), piece.atStart && k.first});
  return out;
}

void preTokenizeStep(const PreTokenizeStep &step, const TextPiece &piece,
                     std::vector<TextPiece> &out) {
  switch (step.kind) {
  case PreTokenizeStep::Kind::Split:
    for (TextPiece &p : split(step, piece))
      out.push_back(std::move(p));
    return;
  case PreTokenizeStep::Kind::ByteLevel: {
    TextPiece spaced = piece;
    if (step.prefixSpace && spaced.text[0] != ' ')
      spaced.text.insert(0, " ");
    std::vector<TextPiece> words = step.regex ? split(step, spaced) : std::vector{spaced};
    for (TextPiece &w : words) {
      std::string mapped;
      for (unsigned char b : w.text)
        mapped += byteLevelMap().charOf[b];
      out.push_back({std::move(mapped), w.atStart});
    }
    return;
  }
  case PreTokenizeStep::Kind::Metaspace: {
    std::string text = replaceAll(piece.text, " ", step.replacement);
    bool prepend = step.prepend == PreTokenizeStep::Prepend::Always ||
                   (step.prepend == PreTokenizeStep::Prepend::First && piece.atStart);
    if (prepend && text.compare(0, step.replacement.size(), step.replacement) != 0)
      text.insert(0, step.replacement);
    if (!step.splitWords) {
      out.push_back({std::move(text), piece.atStart});
      return;
    }
    size_t last = 0; // each word begins at a replacement (MergedWithNext)
    for (size_t at = text.find(step.replacement, 1); at != std::string::npos;
         at = text.find(step.replacement, at + 1)) {
      out.push_back({text.substr(last, at - last), piece.atStart && last == 0});
      last = at;
    }
    out.push_back({text.substr(last), piece.atStart && last == 0});
    return;
  }
  }
}

/// <0xXX> as its byte, or -1.
int fallbackByte(const std::string &token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>')
    return -1;
  int value = 0;
  for (char c : token.substr(3, 2)) {
    int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
    if (digit < 0)
      return -1;
    value = value * 16 + digit;
  }
  return value;
}

void decodeStep(const DecodeStep &step, std::vector<std::string> &tokens) {
  switch (step.kind) {
  case DecodeStep::Kind::ByteLevel:
    for (std::string &t : tokens) {
      std::string bytes;
      bool mapped = true; // a token with a character outside the map stays as it is
      for (int32_t at = 0; mapped && at < (int32_t)t.size();) {
        UChar32 c;
        U8_NEXT(t.data(), at, (int32_t)t.size(), c);
        auto it = byteLevelMap().byteOf.find(c);
        mapped = it != byteLevelMap().byteOf.end();
        if (mapped)
          bytes += it->second;
      }
      if (mapped)
        t = std::move(bytes);
    }
    return;
  case DecodeStep::Kind::Replace:
    for (std::string &t : tokens)
      t = replaceAll(t, step.from, step.to);
    return;
  case DecodeStep::Kind::ByteFallback: {
    std::vector<std::string> out; // runs of byte tokens become one token of their bytes
    bool inBytes = false;
    for (std::string &t : tokens) {
      int b = fallbackByte(t);
      if (b >= 0 && inBytes)
        out.back() += (char)b;
      else
        out.push_back(b >= 0 ? std::string(1, (char)b) : std::move(t));
      inBytes = b >= 0;
    }
    tokens = std::move(out);
    return;
  }
  case DecodeStep::Kind::Fuse: {
    std::string all;
    for (const std::string &t : tokens)
      all += t;
    tokens = {all};
    return;
  }
  case DecodeStep::Kind::Strip:
    for (std::string &t : tokens) {
      for (size_t n = 0; n < step.start && t.compare(0, step.strip.size(), step.strip) == 0; ++n)
        t.erase(0, step.strip.size());
      for (size_t n = 0; n < step.stop && t.size() >= step.strip.size() &&
                         t.compare(t.size() - step.strip.size(), step.strip.size(), step.strip) == 0;
           ++n)
        t.erase(t.size() - step.strip.size());
    }
    return;
  case DecodeStep::Kind::Metaspace:
    for (size_t i = 0; i < tokens.size(); ++i)
      tokens[i] = replaceAll(tokens[i], step.from, i == 0 && step.dropFirstSpace ? "" : step.to);
    return;
  }
}

} // namespace

std::string replaceAll(const std::string &text, const std::string &from, const std::string &to) {
  if (from.empty())
    return text;
  std::string out; // built anew: replacing in place would move the tail each time
  size_t last = 0;
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, last)) {
    out.append(text, last, at - last).append(to);
    last = at + from.size();
  }
  return out.append(text, last);
}

size_t invalidUtf8At(const std::string &text) {
  for (int32_t at = 0; at < (int32_t)text.size();) {
    int32_t start = at;
    UChar32 c;
    U8_NEXT(text.data(), at, (int32_t)text.size(), c);
    if (c < 0)
      return (size_t)start;
  }
  return text.size() > INT32_MAX ? (size_t)INT32_MAX : std::string::npos;
}

std::string normalizeText(const std::vector<NormalizeStep> &steps, std::string text) {
  for (const NormalizeStep &step : steps) {
    if (step.kind == NormalizeStep::Kind::Prepend && !text.empty())
      text.insert(0, step.to);
    else if (step.kind == NormalizeStep::Kind::Replace)
      text = replaceAll(text, step.from, step.to);
    else if (step.kind == NormalizeStep::Kind::UnicodeForm) {
      UErrorCode status = U_ZERO_ERROR;
      icu::UnicodeString normal = step.form->normalize(icu::UnicodeString::fromUTF8(text), status);
      text.clear();
      normal.toUTF8String(text);
    }
  }
  return text;
}

std::vector<TextPiece> preTokenize(const std::vector<PreTokenizeStep> &steps, TextPiece piece) {
  std::vector<TextPiece> pieces;
  if (!piece.text.empty())
    pieces.push_back(std::move(piece));
  for (const PreTokenizeStep &step : steps) {
    std::vector<TextPiece> next;
    for (const TextPiece &p : pieces)
      preTokenizeStep(step, p, next);
    pieces = std::move(next);
  }
  return pieces;
}

std::string decodeTokens(const std::vector<DecodeStep> &steps, std::vector<std::string> tokens) {
  for (const DecodeStep &step : steps)
    decodeStep(step, tokens);
  std::string text;
  for (const std::string &t : tokens)
    text += t;
  return text;
}

} // namespace ampc::cli
