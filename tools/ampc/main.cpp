// ampc: the user CLI. Dispatches to the subcommands and turns every error a
// user can cause into one line, `ampc: error: <file>: <what>`, and exit 1.
#include <cstdio>
#include <cstring>
#include <iostream>

#include "compiler/Diagnostics.h"
#include "tools/ampc/Commands.h"

using namespace ampc::cli;

#ifndef AMPC_VERSION
#define AMPC_VERSION "0.0.0"
#endif

static void printHelp() {
  std::cout << "ampc: automatic mixed precision training compiler\n\n"
               "usage: ampc COMMAND [options]\n\ncommands:\n";
  for (const Command &c : commands())
    std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  std::cout << "\n`ampc COMMAND --help` lists a command's options.\n";
}

/// One error line: control characters and bytes that are not UTF-8 in a
/// user's names are written as escapes, so a message is always one line.
static std::string oneLine(const std::string &text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char ch = text[i];
    size_t length = ch < 0x80 ? 1 : (ch >> 5) == 6 ? 2 : (ch >> 4) == 14 ? 3 : (ch >> 3) == 30 ? 4 : 0;
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k)
      valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 2;
    if (valid && length > 1) {
      out.append(text, i, length);
      i += length - 1;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (ch == '\t') {
      out += "\\t";
    } else if (ch < 0x20 || ch >= 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02X", ch);
      out += hex;
    } else {
      out += char(ch);
    }
  }
  return out;
}

static int fail(const std::string &message) {
  std::cerr << "ampc: error: " << oneLine(message) << "\n";
  return 1;
}

static int runCommand(const Command &c, int argc, char **argv) {
  try {
    return c.run(Args(argc, argv, 2, c.options));
  } catch (const CliError &e) {
    return fail((e.file.empty() ? "" : e.file + ": ") + e.what());
  } catch (const UsageError &e) {
    return fail(std::string(c.name) + ": " + e.what());
  } catch (const ampc::GraphError &e) {
    return fail(e.what());
  } catch (const std::bad_alloc &) {
    return fail(std::string(c.name) + ": out of memory");
  } catch (const std::exception &e) { // a backstop: every error should be one of the above
    return fail(std::string(c.name) + ": internal error: " + e.what());
  }
}

int main(int argc, char **argv) {
  if (argc < 2)
    return fail("no command given; `ampc --help` lists the commands");
  if (!std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    printHelp();
    return 0;
  }
  if (!std::strcmp(argv[1], "--version")) {
    std::cout << "ampc " AMPC_VERSION " (MLIR 19)\n";
    return 0;
  }
  for (const Command &c : commands()) {
    if (c.name != std::string(argv[1]))
      continue;
    for (int i = 2; i < argc; ++i)
      if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
        std::cout << "usage: ampc " << c.usage << "\n" << c.summary << "\n\noptions:\n"
                  << describeOptions(c.options);
        return 0;
      }
    return runCommand(c, argc, argv);
  }
  return fail("unknown command '" + std::string(argv[1]) + "'; see ampc --help");
}
