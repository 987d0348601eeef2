// Fuzz target: an IDX data file (Fashion-MNIST's format), gzip'd or not.
#include <cstdio>
#include <unistd.h>

#include "fuzz/FuzzUtil.h"
#include "runtime/driver/Data.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const std::string path = "/tmp/ampc-fuzz-idx-" + std::to_string(getpid());
  std::FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    return 0;
  std::fwrite(data, 1, size < ampc::fuzz::kMaxInput ? size : ampc::fuzz::kMaxInput, f);
  std::fclose(f);
  try {
    ampc::rt::readIdx(path);
  } catch (const ampc::rt::RuntimeError &) {
  }
  return 0;
}
