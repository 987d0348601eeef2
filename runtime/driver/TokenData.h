// Token data in llm.c's shard formats (docs/gpt.md, "Token data"): a header
// of 256 little-endian int32 (the magic, the version, the token count), then
// the tokens: uint16 in GPT-2's format (magic 20240520, version 1), uint32
// in LLaMA 3's (magic 20240801, version 7). A language model trains on
// windows of T + 1 tokens: the first T are its inputs, the last T its
// next-token targets.
#ifndef AMPC_RUNTIME_DRIVER_TOKENDATA_H
#define AMPC_RUNTIME_DRIVER_TOKENDATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::rt {

struct TokenShardFormat {
  int32_t magic, version, bytesPerToken;
};
constexpr TokenShardFormat kNarrowTokenShard{20240520, 1, 2}, kWideTokenShard{20240801, 7, 4};
constexpr int64_t kTokenShardHeaderInts = 256;

/// The shards `pattern` names: one file, or a glob of several in sorted
/// order. Throws RuntimeError when nothing matches.
std::vector<std::string> tokenShardPaths(const std::string &pattern);

/// Writes `tokens` as one shard in `format`, atomically. Returns "" or why
/// it failed (a token that the narrow format cannot hold, say).
std::string writeTokenShard(const std::string &path, const std::vector<uint32_t> &tokens,
                            const TokenShardFormat &format);

/// The tokens of one window, read in their shard's width.
class TokenSpan {
public:
  TokenSpan(const void *tokens, bool wide) : tokens_(tokens), wide_(wide) {}
  uint32_t operator[](int64_t i) const {
    return wide_ ? static_cast<const uint32_t *>(tokens_)[i]
                 : static_cast<const uint16_t *>(tokens_)[i];
  }

private:
  const void *tokens_;
  bool wide_;
};

/// The windows of a set of shards, each file mapped read-only. Window i of a
/// shard holds its tokens i*T .. i*T+T (T + 1 of them, so that consecutive
/// windows share one token, as llm.c's loader reads them); no window crosses
/// the end of a shard.
class TokenWindows {
public:
  /// Opens every shard and checks it whole: the header, the file's length,
  /// and every token below `vocab`. Throws RuntimeError naming the shard.
  TokenWindows(const std::string &pattern, int64_t seq, int64_t vocab);
  ~TokenWindows();
  TokenWindows(const TokenWindows &) = delete;
  TokenWindows &operator=(const TokenWindows &) = delete;

  int64_t count() const { return windows_; }
  int64_t seq() const { return seq_; }
  /// Window `index`'s seq + 1 tokens.
  TokenSpan window(int64_t index) const;

private:
  struct Shard {
    void *map = nullptr;
    size_t bytes = 0;
    const char *tokens = nullptr;
    bool wide = false;
    int64_t firstWindow = 0, windows = 0;
  };
  std::vector<Shard> shards_;
  int64_t seq_, windows_ = 0;
};

} // namespace ampc::rt

#endif
