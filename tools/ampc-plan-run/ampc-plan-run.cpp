// ampc-plan-run PLAN [STEPS] [options]: runs a compiled plan with the runtime
// alone (no MLIR): a forward plan on a batch stream, as `ampc run` does, and
// a training plan (one with an lr input) through the training loop, as
// `ampc train` does. The proof that a plan runs without the compiler, and
// the way plans compiled elsewhere run on a machine without MLIR (the GPU
// machine, scripts/gpu-check.sh).
#include <cstdio>
#include <string>

#include "runtime/core/Files.h"
#include "runtime/core/Probes.h"
#include "runtime/driver/BackendCheck.h"
#include "runtime/cpu/CpuEnvironment.h"
#include "runtime/driver/Metrics.h"
#include "tools/ampc/Args.h"

namespace {

using namespace ampc;

const char *kUsage =
    "usage: ampc-plan-run PLAN [STEPS] [options]\n"
    "Runs a plan (ampc compile): a forward plan on a batch stream, a training plan\n"
    "(ampc compile --train) through the training loop. STEPS: batches or optimizer\n"
    "steps (forward: one pass over real data, or 1; training: --epochs over real\n"
    "data, or 100).\n\noptions:\n";

const std::vector<cli::OptionSpec> kOptions = {
    {"device", true, false, "cpu (default) or cuda"},
    {"data", true, false, "synthetic (default), fashion-mnist[:DIR] or FILE.safetensors"},
    {"seed", true, false, "seed of the params, shuffling, dropout and synthetic data (0)"},
    {"epochs", true, false, "training: passes over the training set (1)"},
    {"lr", true, false, "training: learning rate (0.01); a schedule's peak"},
    {"lr-total-steps", true, false,
     "training: a schedule's length in optimizer steps (default: the run's)"},
    {"accumulate", true, false, "training: micro-batches per optimizer step, as compiled (1)"},
    {"eval", true, false, "training: the forward plan that scores the trained params"},
    {"val-data", true, false,
     "training: the validation set for --eval (fashion-mnist-test[:DIR] or FILE.safetensors)"},
    {"eval-every", true, false, "training: validates every N optimizer steps (and at the end)"},
    {"checkpoint", true, false, "training: writes the training state at the end"},
    {"resume", true, false, "training: continues from a checkpoint"},
    {"init-from", true, true, "training: starts from the weights of a safetensors file (repeatable)"},
    {"metrics-json", true, false, "writes the run's figures as JSON"},
    {"no-cuda-graph", false, false, "queues every kernel of every step (no CUDA graph replay)"},
    {"tune-gemms", false, false, "times cuBLASLt's candidates for each GEMM, runs the fastest"},
    {"no-overlap-checks", false, false,
     "training: checks the gradients after the backward, not beside it on a second stream"},
    {"profile", false, false, "training: times every kernel (slower steps; metrics 'profile')"},
    {"help", false, false, "prints this help"},
};

int fail(const std::string &what) { return cli::reportError("ampc-plan-run", what); }

int64_t stepsFrom(const cli::Args &args) {
  if (args.positionals().size() < 2)
    return 0;
  const std::string &arg = args.positionals()[1];
  size_t used = 0;
  long long steps = 0;
  try {
    steps = std::stoll(arg, &used);
  } catch (const std::exception &) {
    used = 0;
  }
  if (used == 0 || used != arg.size() || steps < 1 || steps > cli::Args::kMaxCount)
    throw cli::UsageError("STEPS must be a whole number from 1 to 2147483648, got '" + arg +
                          "'");
  return steps;
}

void writeMetrics(const cli::Args &args, const rt::Json &metrics) {
  if (auto file = args.get("metrics-json"))
    rt::writeFileAtomically(*file, rt::dumpJson(metrics, 2) + "\n");
}

void printDevice(const std::string &name, int64_t peak, double syncs, double waits) {
  std::printf("device: %s, peak %lld bytes; per step: %.2f host syncs, %.2f staging waits\n",
              name.c_str(), (long long)peak, syncs, waits);
}

int train(const cli::Args &args, const rt::Plan &plan, int64_t steps) {
  rt::TrainOptions o;
  o.device = args.get("device").value_or("cpu");
  o.data = args.get("data").value_or("synthetic");
  o.seed = args.getInt("seed", 0, 0);
  o.steps = steps;
  o.epochs = args.getInt("epochs", 1);
  o.lr = args.getNumber("lr", 0.01, 0, 1e6);
  o.lrTotalSteps = args.getInt("lr-total-steps", 0, 1);
  o.valData = args.get("val-data").value_or("");
  o.evalEvery = args.getInt("eval-every", 0, 1);
  o.accumulate = args.getInt("accumulate", 1);
  o.checkpoint = args.getFile("checkpoint");
  o.resume = args.getFile("resume");
  o.initFrom = args.getFiles("init-from");
  o.graphs = !args.has("no-cuda-graph");
  o.tuneGemms = args.has("tune-gemms");
  o.overlapChecks = !args.has("no-overlap-checks");
  o.profile = args.has("profile");
  // A plan compiled with --check-numerics carries its probes: check.
  o.checkNumerics = plan.find(rt::kNonFiniteFlags) >= 0;
  std::optional<rt::Plan> eval;
  if (std::string file = args.getFile("eval"); !file.empty()) {
    try {
      eval = rt::loadPlan(file);
    } catch (const std::exception &e) {
      throw rt::PlanError(file + ": " + e.what());
    }
  }
  rt::Trainer trainer(plan, eval, o);
  rt::TrainResult r = trainer.run();
  std::printf("%s: %lld steps of %lld x %lld samples, %.3f ms/step (median), %.1f samples/s, "
              "peak %lld bytes\n",
              plan.name.c_str(), (long long)r.steps, (long long)o.accumulate, (long long)r.batch,
              r.stepMsMedian, r.samplesPerS, (long long)r.peakBytes);
  std::printf("final loss: %.6g\nloss scale: %g, skipped steps: %lld\n", r.finalLoss, r.lossScale,
              (long long)r.skipped);
  if (r.evalAccuracy)
    std::printf("eval accuracy: %.4f\n", *r.evalAccuracy);
  if (r.numerics && r.numerics->first) {
    const rt::NonFiniteFinding &f = *r.numerics->first;
    std::printf("check-numerics: %lld runs with a non-finite value; the first at step %lld: "
                "'%s' (%s, %s, %s): %s\n",
                (long long)r.numerics->total(), (long long)f.step, f.op.c_str(),
                f.kernel.c_str(), f.backward ? "backward" : "forward", f.dtype.c_str(),
                rt::causeName(f.cause));
  } else if (r.numerics) {
    std::printf("check-numerics: every value was finite\n");
  }
  printDevice(r.deviceName, r.devicePeakBytes, r.hostSyncsPerStep, r.stagingWaitsPerStep);
  writeMetrics(args, rt::trainMetrics(plan, o, r));
  return 0;
}

int run(const cli::Args &args, const rt::Plan &plan, int64_t steps) {
  rt::RunOptions o;
  o.device = args.get("device").value_or("cpu");
  o.data = args.get("data").value_or("synthetic");
  o.seed = args.getInt("seed", 0, 0);
  o.steps = steps ? steps : (o.data == "synthetic" ? 1 : std::optional<int64_t>());
  o.graphs = !args.has("no-cuda-graph");
  o.tuneGemms = args.has("tune-gemms");
  rt::Runner runner(plan, o);
  rt::RunResult r = runner.run();
  std::printf("%s: %lld steps, %zu kernels, peak %lld bytes, %.3f ms/batch (median)\n",
              plan.name.c_str(), (long long)r.steps, plan.steps.size(),
              (long long)plan.peakBytes(), r.msMedian);
  if (r.loss)
    std::printf("loss: %.6g\n", *r.loss);
  if (r.accuracy)
    std::printf("accuracy: %.4f\n", *r.accuracy);
  printDevice(r.deviceName, r.devicePeakBytes, r.hostSyncsPerStep, r.stagingWaitsPerStep);
  writeMetrics(args, rt::runMetrics(plan, o, r));
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  ampc::rt::applyCpuEnvironment(argv); // OpenMP threads spin briefly, then sleep
  std::string path;
  try {
    cli::Args args(argc, argv, 1, kOptions);
    if (args.has("help") || (argc > 1 && std::string(argv[1]) == "-h")) {
      std::printf("%s%s", kUsage, cli::describeOptions(kOptions).c_str());
      return 0;
    }
    if (args.positionals().empty())
      throw cli::UsageError("needs a plan: ampc-plan-run PLAN [STEPS] [options] (see --help)");
    if (args.positionals().size() > 2)
      throw cli::UsageError("unexpected argument '" + args.positionals()[2] +
                            "': ampc-plan-run PLAN [STEPS] [options] (see --help)");
    path = args.positionals()[0];
    int64_t steps = stepsFrom(args);
    if (auto file = args.get("metrics-json"))
      if (std::string why = rt::checkWritable(*file); !why.empty())
        return fail(*file + ": cannot write: " + why);
    rt::Plan plan = rt::loadPlan(path);
    return rt::isTrainingPlan(plan) ? train(args, plan, steps) : run(args, plan, steps);
  } catch (const cli::UsageError &e) {
    return fail(e.what());
  } catch (const std::bad_alloc &) {
    return fail(path + ": out of memory");
  } catch (const std::exception &e) {
    return fail(path.empty() ? e.what() : path + ": " + e.what());
  }
}
