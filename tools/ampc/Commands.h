// The `ampc` subcommands. Each returns the exit status or throws CliError.
#ifndef AMPC_TOOLS_AMPC_COMMANDS_H
#define AMPC_TOOLS_AMPC_COMMANDS_H

#include <stdexcept>
#include <memory>
#include <string>

#include <set>

#include "compiler/Diagnostics.h"
#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "compiler/plan/PlanOptions.h"
#include "mlir/IR/OwningOpRef.h"
#include "runtime/driver/Trainer.h"
#include "runtime/core/Errors.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/Target.h"
#include "runtime/device/Backend.h"
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
int runLora(const Args &args);
int runReport(const Args &args);
int runDot(const Args &args);
int runPlot(const Args &args);
/// The SVG `ampc plot` draws of a metrics file's text; throws CliError
/// naming `path` for one it cannot plot.
std::string plotMetrics(const std::string &text, const std::string &path);
int runCompile(const Args &args);
int runRun(const Args &args);
int runTrain(const Args &args);

int runDoctor(const Args &args);
int runImport(const Args &args);
int runExport(const Args &args);
int runTokenize(const Args &args);
int runSample(const Args &args);
int runWeights(const Args &args);

/// The JSON object in `path` (`what` says what it should be, for the
/// error). Throws CliError naming the file.
rt::Json readJsonObject(const std::string &path, const std::string &what);

class Tokenizer;
/// --tokenizer's tokenizer.json, or bytes. Throws CliError.
std::unique_ptr<Tokenizer> tokenizerFrom(const Args &args);

/// The training options (optimizer, loss scaling, accumulation, IR printing)
/// of `train` and `compile --train`; throws UsageError on a bad value.
std::vector<OptionSpec> trainingOptionSpecs();
TrainSettings trainSettingsFrom(const Args &args);
/// `--ignore-index N` and `--class-weights W,...`, as given (train,
/// compile, run).
CrossEntropyWeighting crossEntropyWeightingFrom(const Args &args);
/// `--class-weights balanced`: scikit-learn's n / (C * count) for each
/// class of `forward`'s cross entropy, n and count counted over the labels
/// of the training set `data` (rows labelled `ignore` left out) and C the
/// classes they have; a class no label has weighs 1. Throws RuntimeError
/// when the data has no labels.
std::vector<double> balancedClassWeights(mlir::ModuleOp forward, const std::string &data,
                                         std::optional<int64_t> ignore);

/// A training step compiled from a graph, as `train` and `doctor` run it.
struct TrainJob {
  std::string in;
  AmpSettings amp;
  TrainSettings settings;
  FusionSet fusions; // `--no-fuse`
  rt::TrainOptions options;
  rt::Plan trainPlan, evalPlan;
  /// Every value name of the user's graph (for advice naming black varnames).
  std::set<std::string> userValues;
  /// The ranks of a data-parallel run (`mpirun -np N ampc train`), or null.
  std::unique_ptr<rt::Communicator> communicator;
  /// Whether this process prints (rank 0, or the only rank).
  bool printer() const { return !communicator || communicator->rank() == 0; }
};

/// Reads the training options of `args` and compiles the training step
/// (with the numerics probes `probes` asks for, measured against the run's
/// L) and the forward plan that evaluates it; `forward`, when given,
/// receives the AMP-rewritten forward graph. Throws CliError.
TrainJob compileTraining(const Args &args, ProbeOptions::Mode probes, mlir::MLIRContext &ctx,
                         mlir::OwningOpRef<mlir::ModuleOp> *forward = nullptr);
/// Trains `job` with a progress bar labelled `label`. Throws CliError.
rt::TrainResult runTraining(const TrainJob &job, const char *label);

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

/// The backend `--device` names (cpu by default), checked now: unknown, not
/// built, or without its hardware is an error that says so.
std::string deviceFrom(const Args &args);
/// How `--init-layout` (torch or graph) says a weights file lays out Linear
/// weights; absent: as its metadata says.
rt::WeightLayout weightLayoutFrom(const Args &args);
/// Gives every param of `ex`'s forward plan its value from `files` (a
/// checkpoint or weights files, read together, named as `what` in errors):
/// by name, in --init-layout's layout, and with --ema a checkpoint's weight
/// averages in place of its weights.
void loadWeightFiles(const Args &args, const std::vector<std::string> &files, rt::Executor &ex,
                     const std::string &what);
/// The target `--device` names, whether or not this build can run it (a plan
/// for the GPU can be compiled anywhere).
const rt::Target &targetFrom(const Args &args);

/// Prints a profile: each kernel's time per `per` (over `count` of them) and
/// share, and the share of the run time spent outside kernels. Returns the
/// share of kernel time in AMP bookkeeping (casts, finite checks, scale
/// updates: the kernel traits').
double printProfile(const rt::Profile &profile, const char *per, int64_t count);

/// Checks that the input file (the single positional) can be read; throws
/// CliError naming it. Called before checkOutput where the input is read
/// only later: a missing input is the first thing to fix.
void checkInput(const Args &args);

/// Checks that the file option `name` (if given) can be written, so that a
/// run fails at once rather than after its work; throws CliError naming it.
void checkOutput(const Args &args, const std::string &name);

/// The single positional argument (the input file), or a usage error.
const std::string &inputFile(const Args &args);
/// The `-o`/`--output` file, or a usage error.
std::string outputFile(const Args &args);

} // namespace ampc::cli

#endif
