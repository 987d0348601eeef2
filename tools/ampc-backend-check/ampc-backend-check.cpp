// ampc-backend-check PLAN... [options]: compares a backend (cuda) with the CPU
// reference on compiled plans, step by step and over whole runs
// (runtime/driver/BackendCheck.h), and prints per kernel how closely they
// agree. Exit status: 0 all agree, 1 a disagreement or an error, 77 the
// candidate's device is missing here (a skip). Links only the runtime.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "runtime/cpu/CpuEnvironment.h"
#include "runtime/device/Registry.h"
#include "runtime/driver/BackendCheck.h"
#include "tools/ampc/Args.h"

namespace {

using namespace ampc::rt;

const char *kUsage =
    "usage: ampc-backend-check PLAN... [--candidate cuda] [--reference cpu]\n"
    "                          [--data synthetic|fashion-mnist[:DIR]] [--seed N] [--runs N]\n"
    "                          [--inject-inf RUN] [--tune-gemms] [--no-overlap-checks]\n"
    "                          [--verbose]\n"
    "Compares the candidate backend with the reference on each plan (compiled with\n"
    "ampc compile --device CANDIDATE): every step from the reference's inputs, under\n"
    "its kernel's agreement (exact, rounded, accumulated, attention), then N whole\n"
    "runs (4; 0 skips them) with and without graph replay; --inject-inf RUN puts\n"
    "an inf in run RUN's first float input; --tune-gemms lets the candidate time\n"
    "its GEMMs' algorithms (docs/cuda.md); --no-overlap-checks runs the finite\n"
    "check in its place, not beside the backward (docs/cuda.md). Exit 0: all\n"
    "agree; 1: a disagreement or an error; 77: the candidate's device is missing\n"
    "here.\n";

int fail(const std::string &what) { return ampc::cli::reportError("ampc-backend-check", what); }

struct KernelSummary {
  Agreement agreement = Agreement::Exact;
  int steps = 0, exact = 0, failed = 0;
  double worstShare = 0;
};

void printStep(const StepCheck &c, const CheckOptions &o) {
  if (!c.referenceError.empty() || !c.candidateError.empty()) {
    auto said = [](const std::string &e) { return e.empty() ? std::string("ran") : e; };
    std::printf("  %s step %zu '%s' (%s): %s: %s; %s: %s\n", c.ok() ? "both refused" : "FAIL",
                c.index, c.step.c_str(), kernelName(c.kernel), o.reference.c_str(),
                ampc::cli::oneLine(said(c.referenceError)).c_str(), o.candidate.c_str(),
                ampc::cli::oneLine(said(c.candidateError)).c_str());
    return;
  }
  for (const auto &[name, d] : c.buffers) {
    if (d.differing == 0)
      continue;
    std::printf("  %s step %zu '%s' (%s, %s): buffer '%s': %lld of %lld elements differ, "
                "%lld outside; worst at %lld: %s %.9g, %s %.9g (%.3g of its allowance)\n",
                d.ok() ? "near" : "FAIL", c.index, c.step.c_str(), kernelName(c.kernel),
                agreementName(c.agreement), name.c_str(), (long long)d.differing,
                (long long)d.elements, (long long)d.outside, (long long)d.worstIndex,
                o.reference.c_str(), d.worstRef, o.candidate.c_str(), d.worstGot, d.worstShare);
  }
}

/// Prints the step check; `stopped`: a step raised an error (the check
/// stopped there), `refused` on both backends alike.
bool reportSteps(const Plan &plan, const CheckOptions &o, bool verbose, bool &stopped) {
  std::vector<StepCheck> checks = ampc::rt::checkSteps(plan, o);
  stopped = !checks.empty() &&
            !(checks.back().referenceError.empty() && checks.back().candidateError.empty());
  bool refused = stopped && checks.back().ok();
  std::map<std::string, KernelSummary> kernels;
  int failed = 0, exact = 0, overflowed = 0;
  for (const StepCheck &c : checks) {
    KernelSummary &k = kernels[kernelName(c.kernel)];
    k.agreement = c.agreement;
    ++k.steps;
    k.exact += c.exact();
    k.failed += !c.ok();
    for (const auto &b : c.buffers)
      k.worstShare = std::max(k.worstShare, b.second.worstShare);
    failed += !c.ok();
    exact += c.exact();
    overflowed += c.overflowed;
    if (verbose ? !c.exact() : !c.ok() || !c.referenceError.empty())
      printStep(c, o);
  }
  int near = (int)checks.size() - exact - failed - (refused ? 1 : 0);
  std::printf("steps: %zu of %zu, %d bit-exact, %d within tolerance, %d outside%s\n",
              checks.size(), plan.steps.size(), exact, near, failed,
              refused ? ", the last refused by both" : "");
  if (overflowed)
    std::printf("  %d read an inf or NaN: their sums may differ where a value is not finite "
                "(0 x inf is the library's)\n",
                overflowed);
  std::printf("  %-32s %-11s %5s %5s %6s %s\n", "kernel", "agreement", "steps", "exact", "failed",
              "worst share of allowance");
  for (const auto &[name, k] : kernels) {
    char share[32] = "-";
    if (k.exact < k.steps)
      std::snprintf(share, sizeof share, "%.3g", k.worstShare);
    std::printf("  %-32s %-11s %5d %5d %6d %s\n", name.c_str(), agreementName(k.agreement),
                k.steps, k.exact, k.failed, share);
  }
  return failed == 0;
}

std::string losses(const std::vector<double> &values) {
  std::string text;
  for (double v : values) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.7g", text.empty() ? "" : " ", v);
    text += buf;
  }
  return text.empty() ? "(no loss)" : text;
}

bool reportRuns(const Plan &plan, const CheckOptions &o) {
  RunCheck r = ampc::rt::checkRuns(plan, o);
  std::printf("runs: %lld per backend\n", (long long)o.runs);
  std::printf("  loss %-9s %s\n", o.reference.c_str(), losses(r.reference).c_str());
  std::printf("  loss %-9s %s (max relative difference %.3g, allowed %.3g)\n",
              o.candidate.c_str(), losses(r.replayed).c_str(), r.maxLossRelDiff,
              r.lossAllowance());
  std::printf("  loss %-9s from params one ulp away: max relative difference %.3g",
              o.reference.c_str(), r.referenceSpread);
  if (r.lossAllowance() > kRunLossTolerance)
    std::printf(" (the allowance is %g times that)", kSpreadFactor);
  std::printf("\n");
  std::printf("  the program equals its steps run one by one (losses, params, outputs): %s\n",
              r.stepwiseMatches ? "yes" : "NO");
  std::printf("  graph replay equals queued launches (losses, params, outputs): %s\n",
              r.replayMatches ? "yes" : "NO");
  std::printf("  deterministic (two replayed runs, bit for bit): %s\n",
              r.deterministic ? "yes" : "NO");
  std::printf("  loss scale %g and %g, skipped steps %lld and %lld: %s", r.referenceScale,
              r.candidateScale, (long long)r.referenceSkipped, (long long)r.candidateSkipped,
              r.bookkeepingMatches ? "the same bits" : r.bookkeepingSteady ? "DIFFERENT" : "different");
  if (!r.bookkeepingSteady)
    std::printf(" (from params one ulp away the %s skips %lld: a step on the edge of overflow, "
                "where rounding decides)",
                o.reference.c_str(), (long long)r.nudgedSkipped);
  std::printf("\n");
  return r.ok();
}

} // namespace

int main(int argc, char **argv) {
  ampc::rt::applyCpuEnvironment(argv); // OpenMP threads spin briefly, then sleep
  std::vector<std::string> plans;
  CheckOptions o;
  bool verbose = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (arg == "--verbose") {
      verbose = true;
    } else if (arg == "--tune-gemms") {
      o.tuneGemms = true;
    } else if (arg == "--no-overlap-checks") {
      o.overlapChecks = false;
    } else if (arg == "--candidate" || arg == "--reference" || arg == "--data" ||
               arg == "--seed" || arg == "--runs" || arg == "--inject-inf") {
      const char *v = i + 1 < argc ? argv[++i] : nullptr;
      if (!v)
        return fail(arg + " needs a value");
      std::string text = v;
      if (arg == "--candidate")
        o.candidate = text;
      else if (arg == "--reference")
        o.reference = text;
      else if (arg == "--data")
        o.data = text;
      else {
        size_t used = 0;
        long long n = -1;
        try {
          n = std::stoll(text, &used);
        } catch (const std::exception &) {
        }
        if (used != text.size() || n < 0 || n > (1ll << 31))
          return fail(arg + " must be a whole number from 0 to 2147483648, got '" + text + "'");
        if (arg == "--seed")
          o.seed = (uint64_t)n;
        else if (arg == "--runs")
          o.runs = n;
        else
          o.injectInfAt = n;
      }
    } else if (arg.size() > 1 && arg[0] == '-') {
      return fail("unknown option '" + arg + "'; see --help");
    } else {
      plans.push_back(arg);
    }
  }
  if (plans.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  try {
    createBackend(o.candidate);
    createBackend(o.reference);
  } catch (const DeviceUnavailable &e) {
    std::fprintf(stderr, "ampc-backend-check: skipped: %s\n", ampc::cli::oneLine(e.what()).c_str());
    return 77;
  } catch (const std::exception &e) {
    return fail(e.what());
  }
  int passed = 0, failed = 0, skipped = 0;
  for (const std::string &path : plans) {
    try {
      Plan plan = loadPlan(path);
      std::printf("== %s: plan '%s' (%s target), %zu steps; %s against %s\n", path.c_str(),
                  plan.name.c_str(), plan.target.name.c_str(), plan.steps.size(),
                  o.candidate.c_str(), o.reference.c_str());
      bool stopped = false;
      bool ok = reportSteps(plan, o, verbose, stopped);
      if (stopped)
        std::printf("runs: skipped (a step raised an error on the %s data)\n", o.data.c_str());
      else if (o.runs > 0)
        ok = reportRuns(plan, o) && ok;
      std::printf("%s: %s\n", path.c_str(), ok ? "PASS" : "FAIL");
      (ok ? passed : failed)++;
    } catch (const Uncheckable &e) {
      std::printf("%s: SKIPPED: %s\n", path.c_str(), ampc::cli::oneLine(e.what()).c_str());
      ++skipped;
    } catch (const std::bad_alloc &) {
      fail(path + ": out of memory");
      ++failed;
    } catch (const std::exception &e) {
      fail(path + ": " + e.what());
      ++failed;
    }
    std::fflush(stdout);
  }
  std::printf("%zu plans: %d pass, %d fail, %d skipped\n", plans.size(), passed, failed, skipped);
  return failed ? 1 : 0;
}
