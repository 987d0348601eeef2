// Fuzz target: the command line of every `ampc` command: the input, split at
// NUL bytes, is the argument list; every option is then read as a number, a
// count and a file name.
#include <vector>

#include "fuzz/FuzzUtil.h"
#include "tools/ampc/Commands.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using namespace ampc::cli;
  std::string all = ampc::fuzz::text(data, size);
  std::vector<std::string> words;
  for (size_t start = 0; start <= all.size() && words.size() < 64;) {
    size_t end = all.find('\0', start);
    end = end == std::string::npos ? all.size() : end;
    words.push_back(all.substr(start, end - start));
    start = end + 1;
  }
  std::vector<char *> argv;
  for (std::string &w : words)
    argv.push_back(w.data());
  for (const Command &c : commands()) {
    try {
      Args args((int)argv.size(), argv.data(), 0, c.options);
      for (const OptionSpec &o : c.options) {
        for (auto read : {+[](const Args &a, const std::string &n) { a.getInt(n, 0); },
                          +[](const Args &a, const std::string &n) { a.getNumber(n, 0, -1, 1); },
                          +[](const Args &a, const std::string &n) { a.getFile(n); }}) {
          try {
            read(args, o.name);
          } catch (const UsageError &) {
          }
        }
      }
    } catch (const UsageError &) {
    }
  }
  return 0;
}
