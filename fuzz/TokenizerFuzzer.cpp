// Fuzz target: a tokenizer.json (`--tokenizer`), then text it encodes and
// decodes. The input up to its first NUL byte is the JSON; after it, the
// text (a fixed one with spaces, digits, contractions, multi-byte
// characters and special tokens when there is no NUL).
#include "fuzz/FuzzUtil.h"
#include "tools/ampc/Tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string input = ampc::fuzz::text(data, size);
  size_t nul = input.find('\0');
  std::string json = input.substr(0, nul);
  std::string text = nul == std::string::npos
                         ? "Hello  world, it's 2026!\n\tcaf\xc3\xa9 \xe2\x96\x81x <s>a</s> <|endoftext|>"
                         : input.substr(nul + 1);
  try {
    std::unique_ptr<ampc::cli::Tokenizer> tokenizer = ampc::cli::parseTokenizer(json);
    std::vector<int64_t> ids = tokenizer->encode(text, true);
    for (int64_t id : ids)
      if (id < 0 || id >= tokenizer->size())
        __builtin_trap(); // an id outside the vocabulary is a finding
    tokenizer->decode(ids);
  } catch (const ampc::cli::TokenizerError &) {
  }
  return 0;
}
