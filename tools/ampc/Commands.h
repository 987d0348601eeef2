// The `ampc` subcommands. Each returns the exit status or throws CliError.
#ifndef AMPC_TOOLS_COMMANDS_H
#define AMPC_TOOLS_COMMANDS_H

#include <stdexcept>
#include <string>

#include "compiler/Diagnostics.h"
#include "compiler/Pipelines.h"
#include "runtime/Kernels.h"
#include "tools/ampc/Args.h"

namespace ampc::cli {

/// An error to print as `ampc: error: <file>: <what>`.
struct CliError : std::runtime_error {
  CliError(std::string file, const std::string &what)
      : std::runtime_error(what), file(std::move(file)) {}
  std::string file;
};

struct Command {
  const char *name, *usage, *summary;
  std::vector<OptionSpec> options;
  int (*run)(const Args &args);
};

const std::vector<Command> &commands();

int runModel(const Args &args);
int runRewrite(const Args &args);
int runReport(const Args &args);
int runDot(const Args &args);
int runCompile(const Args &args);
int runRun(const Args &args);
int runTrain(const Args &args);

/// The training options (optimizer, loss scaling, accumulation, IR printing)
/// of `train` and `compile --train`; throws UsageError on a bad value.
std::vector<OptionSpec> trainingOptionSpecs();
TrainSettings trainSettingsFrom(const Args &args);

/// Runs `body`, turning the errors a user can cause (graph, plan, runtime and
/// usage errors) into a CliError that names `file`.
template <typename F> auto onFile(const std::string &file, F body) {
  try {
    return body();
  } catch (const GraphError &e) {
    throw CliError(file, e.what());
  } catch (const rt::PlanError &e) {
    throw CliError(file, e.what());
  } catch (const rt::RuntimeError &e) {
    throw CliError(file, e.what());
  } catch (const UsageError &e) {
    throw CliError(file, e.what());
  }
}

/// Checks `--device`: cpu (the default) runs; cuda is refused until the CUDA
/// backend exists.
void checkDevice(const Args &args);

/// The single positional argument (the input file), or a usage error.
const std::string &inputFile(const Args &args);
/// The `-o`/`--output` file, or a usage error.
std::string outputFile(const Args &args);

} // namespace ampc::cli

#endif
