// ampc: the user CLI. Dispatches to the subcommands and turns every error a
// user can cause into one line, `ampc: error: <file>: <what>`, and exit 1.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <set>

#include <omp.h>

#include "compiler/Diagnostics.h"
#include "runtime/core/Plan.h"
#include "runtime/core/Version.h"
#include "runtime/cpu/CpuEnvironment.h"
#include "tools/ampc/Commands.h"

using namespace ampc::cli;


static void printHelp() {
  std::cout << "ampc: automatic mixed precision training compiler\n\n"
               "usage: ampc COMMAND [options]\n\ncommands:\n";
  for (const Command &c : commands())
    std::cout << "  " << c.usage << "\n      " << c.summary << "\n";
  std::cout << "\n`ampc COMMAND --help` lists a command's options.\n";
}

static int fail(const std::string &message) { return reportError("ampc", message); }

static int runCommand(const Command &c, int argc, char **argv) {
  try {
    return c.run(Args(argc, argv, 2, c.options));
  } catch (const CliError &e) { // the file, unless the message starts with it
    std::string what = e.what();
    bool named = e.file.empty() || what.rfind(e.file + ": ", 0) == 0;
    return fail((named ? "" : e.file + ": ") + what);
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
    std::cout << "ampc " << ampc::kVersion << " (MLIR 19; saved graphs: version "
              << ampc::kGraphFormatVersion << ", plans: version " << ampc::rt::kPlanVersion
              << ")\nCPU runtime: " << omp_get_max_threads()
              << " OpenMP threads; waiting threads: " << ampc::rt::waitPolicy()
              << "; OpenBLAS core: " << ampc::rt::blasCore() << "\n";
    return 0;
  }
  for (const Command &c : commands()) {
    if (c.name != std::string(argv[1]))
      continue;
    // Commands that run plans on the CPU: OpenMP threads spin briefly, then
    // sleep, and OpenBLAS's kernels fit the CPU.
    static const std::set<std::string> runsPlans = {"run", "train", "doctor", "sample"};
    if (runsPlans.count(c.name))
      ampc::rt::applyCpuEnvironment(argv);
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
