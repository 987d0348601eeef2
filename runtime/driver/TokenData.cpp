#include "runtime/driver/TokenData.h"

#include <algorithm>
#include <cstring>

#include <fcntl.h>
#include <glob.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "runtime/core/Errors.h"
#include "runtime/core/Files.h"

namespace ampc::rt {

std::vector<std::string> tokenShardPaths(const std::string &pattern) {
  glob_t found{};
  int rc = glob(pattern.c_str(), GLOB_NOSORT, nullptr, &found);
  std::vector<std::string> paths;
  for (size_t i = 0; rc == 0 && i < found.gl_pathc; ++i)
    paths.push_back(found.gl_pathv[i]);
  globfree(&found);
  if (paths.empty())
    throw RuntimeError(pattern + ": no token shard matches (give a file written by `ampc "
                       "tokenize` or llm.c, or a glob such as 'data/train_*.bin')");
  std::sort(paths.begin(), paths.end());
  return paths;
}

std::string writeTokenShard(const std::string &path, const std::vector<uint32_t> &tokens,
                            const TokenShardFormat &format) {
  if (tokens.size() > (size_t)INT32_MAX)
    return "a shard holds at most 2^31 - 1 tokens";
  int32_t header[kTokenShardHeaderInts] = {format.magic, format.version, (int32_t)tokens.size()};
  std::vector<uint16_t> narrow;
  if (format.bytesPerToken == 2) {
    narrow.reserve(tokens.size());
    for (uint32_t t : tokens) {
      if (t > UINT16_MAX)
        return "token " + std::to_string(t) + " does not fit GPT-2's uint16 format";
      narrow.push_back((uint16_t)t);
    }
  }
  const char *data = format.bytesPerToken == 2 ? reinterpret_cast<const char *>(narrow.data())
                                               : reinterpret_cast<const char *>(tokens.data());
  return writeFileAtomically(path, [&](std::ostream &out) {
    out.write(reinterpret_cast<const char *>(header), sizeof header);
    out.write(data, (std::streamsize)(tokens.size() * format.bytesPerToken));
    return bool(out);
  });
}

namespace {

/// Maps `path` read-only and checks it as a shard; returns its token count
/// and sets `wide` for uint32 tokens.
int64_t mapShard(const std::string &path, void *&map, size_t &bytes, bool &wide) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    throw RuntimeError(path + ": cannot read the token shard: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    throw RuntimeError(path + ": cannot read the token shard (not a regular file)");
  }
  bytes = (size_t)st.st_size;
  const size_t headerBytes = kTokenShardHeaderInts * sizeof(int32_t);
  if (bytes < headerBytes) {
    close(fd);
    throw RuntimeError(path + ": not a token shard: " + std::to_string(bytes) +
                       " bytes, shorter than the 1024-byte header");
  }
  map = mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  if (map == MAP_FAILED)
    throw RuntimeError(path + ": cannot map the token shard: " + std::strerror(errno));
  int32_t header[3];
  std::memcpy(header, map, sizeof header);
  const TokenShardFormat *format = nullptr;
  for (const TokenShardFormat *f : {&kNarrowTokenShard, &kWideTokenShard})
    if (header[0] == f->magic)
      format = f;
  std::string why;
  if (!format)
    why = "not a token shard: its magic is " + std::to_string(header[0]) + ", neither " +
          std::to_string(kNarrowTokenShard.magic) + " (llm.c's GPT-2 format, uint16 tokens) nor " +
          std::to_string(kWideTokenShard.magic) + " (its LLaMA 3 format, uint32; `ampc tokenize` "
          "writes both)";
  else if (header[1] != format->version)
    why = "token shard version " + std::to_string(header[1]) + " with magic " +
          std::to_string(format->magic) + "; only version " + std::to_string(format->version) +
          " is read";
  else if (size_t width = format->bytesPerToken;
           header[2] < 0 || bytes != headerBytes + width * (size_t)header[2])
    why = "the header counts " + std::to_string(header[2]) + " tokens but the file holds " +
          std::to_string((bytes - headerBytes) / width) +
          ((bytes - headerBytes) % width ? " and a part" : "") + " (truncated or damaged)";
  if (!why.empty()) {
    munmap(map, bytes);
    throw RuntimeError(path + ": " + why);
  }
  wide = format->bytesPerToken == 4;
  return header[2];
}

} // namespace

TokenWindows::TokenWindows(const std::string &pattern, int64_t seq, int64_t vocab)
    : seq_(seq) {
  try {
    for (const std::string &path : tokenShardPaths(pattern)) {
      Shard s;
      int64_t count = mapShard(path, s.map, s.bytes, s.wide);
      shards_.push_back(s);
      Shard &shard = shards_.back();
      shard.tokens = static_cast<const char *>(shard.map) + kTokenShardHeaderInts * 4;
      TokenSpan tokens(shard.tokens, shard.wide);
      for (int64_t i = 0; i < count; ++i)
        if (tokens[i] >= (uint64_t)vocab)
          throw RuntimeError(path + ": token " + std::to_string(tokens[i]) + " at position " +
                             std::to_string(i) + " is outside the model's vocabulary of " +
                             std::to_string(vocab));
      shard.firstWindow = windows_;
      shard.windows = count > seq ? (count - 1) / seq : 0;
      windows_ += shard.windows;
    }
    if (windows_ == 0)
      throw RuntimeError(pattern + ": the shards hold no window of " + std::to_string(seq + 1) +
                         " tokens (the graph's sequence length plus the next token)");
  } catch (...) {
    for (Shard &s : shards_)
      munmap(s.map, s.bytes);
    throw;
  }
}

TokenWindows::~TokenWindows() {
  for (Shard &s : shards_)
    munmap(s.map, s.bytes);
}

TokenSpan TokenWindows::window(int64_t index) const {
  auto it = std::upper_bound(shards_.begin(), shards_.end(), index,
                             [](int64_t i, const Shard &s) { return i < s.firstWindow; });
  const Shard &s = *(it - 1);
  return TokenSpan(s.tokens + (index - s.firstWindow) * seq_ * (s.wide ? 4 : 2), s.wide);
}

} // namespace ampc::rt
