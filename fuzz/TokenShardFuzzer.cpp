// Fuzz target: a token shard (llm.c's format, `--data tokens:`), opened as a
// model of seq 4 and vocabulary 300 reads it, every window read.
#include <cstdio>
#include <unistd.h>

#include "fuzz/FuzzUtil.h"
#include "runtime/core/Errors.h"
#include "runtime/driver/TokenData.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/ampc-fuzz-tokens-" + std::to_string(getpid());
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size < ampc::fuzz::kMaxInput ? size : ampc::fuzz::kMaxInput, f);
  std::fclose(f);
  try {
    ampc::rt::TokenWindows windows(path, 4, 300);
    unsigned sum = 0;
    for (int64_t i = 0; i < windows.count(); ++i)
      for (int t = 0; t <= 4; ++t)
        sum += windows.window(i)[t];
    if (sum == 0xffffffffu) // keeps the reads
      std::puts("");
  } catch (const ampc::rt::RuntimeError &) {
  }
  return 0;
}
