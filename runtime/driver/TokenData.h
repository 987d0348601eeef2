// Token data in llm.c's shard format (docs/gpt.md, "Token data"): a header
// of 256 little-endian int32 (magic 20240520, version 1, the token count),
// then the tokens as uint16. A language model trains on windows of T + 1
// tokens: the first T are its inputs, the last T its next-token targets.
#ifndef AMPC_RUNTIME_DRIVER_TOKENDATA_H
#define AMPC_RUNTIME_DRIVER_TOKENDATA_H

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::rt {

constexpr int32_t kTokenShardMagic = 20240520;
constexpr int32_t kTokenShardVersion = 1;
constexpr int64_t kTokenShardHeaderInts = 256;

/// The shards `pattern` names: one file, or a glob of several in sorted
/// order. Throws RuntimeError when nothing matches.
std::vector<std::string> tokenShardPaths(const std::string &pattern);

/// Writes `tokens` as one shard, atomically. Returns "" or why it failed.
std::string writeTokenShard(const std::string &path, const std::vector<uint16_t> &tokens);

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
  const uint16_t *window(int64_t index) const;

private:
  struct Shard {
    void *map = nullptr;
    size_t bytes = 0;
    const uint16_t *tokens = nullptr;
    int64_t firstWindow = 0, windows = 0;
  };
  std::vector<Shard> shards_;
  int64_t seq_, windows_ = 0;
};

} // namespace ampc::rt

#endif
