#include "runtime/driver/BackendCheck.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/core/Convert.h"
#include "runtime/core/StepVariants.h"
#include "runtime/driver/Data.h"

namespace ampc::rt {
namespace {

/// Unit roundoff of what a kernel computes in: half an ulp of 1 (f64
/// tensors are computed in f32).
double unitRoundoff(DType dtype) {
  switch (dtype) {
  case DType::F16: return std::ldexp(1.0, -11);
  case DType::BF16: return std::ldexp(1.0, -8);
  default: return std::ldexp(1.0, -24);
  }
}

DataFeed feedFor(const Plan &plan, const CheckOptions &options, bool training) {
  try {
    return DataFeed(plan, options.data, training, options.seed, {"lr", kLrTotalSteps});
  } catch (const RuntimeError &e) {
    throw Uncheckable(options.data + " data cannot feed the plan: " + e.what());
  }
}

/// A training plan's run scalars: the lr and, with a schedule, its length
/// (the check's runs).
void writeRates(Executor &ex, const CheckOptions &options) {
  ex.writeScalar(ex.id("lr"), options.lr);
  if (int total = ex.plan().find(kLrTotalSteps); total >= 0)
    ex.writeScalar(total, (double)std::max<int64_t>(options.runs, 1));
}

/// The reference's inputs: batch 0 of the data and, in training, the rates.
void feedFirstBatch(Executor &ex, const CheckOptions &options, bool training) {
  DataFeed feed = feedFor(ex.plan(), options, training);
  feed.fill(ex, 0);
  if (training)
    writeRates(ex, options);
}

ExecOptions execOptions(const Plan &plan, const CheckOptions &options,
                        const std::string &device, bool graphs) {
  ExecOptions o;
  o.training = isTrainingPlan(plan);
  o.seed = options.seed;
  o.device = device;
  o.graphs = graphs;
  o.tuneGemms = options.tuneGemms;
  o.overlapChecks = options.overlapChecks;
  return o;
}

/// The buffers a step touches, each once: inputs, then outputs.
std::vector<int> touched(const Step &step) {
  std::vector<int> ids;
  for (const std::vector<int> *list : {&step.inputs, &step.outputs})
    for (int id : *list)
      if (std::find(ids.begin(), ids.end(), id) == ids.end())
        ids.push_back(id);
  return ids;
}

/// The buffers of the AMP bookkeeping: the counters, and the loss scale
/// with its counters (update_loss_scaling's inputs 1-3).
std::vector<int> bookkeeping(const Plan &plan) {
  std::vector<int> ids;
  for (int id : {plan.iteration, plan.skippedSteps})
    if (id >= 0)
      ids.push_back(id);
  for (const Step &s : plan.steps)
    if (s.kernel == Kernel::UpdateLossScaling)
      ids.insert(ids.end(), s.inputs.begin() + 1, s.inputs.end());
  return ids;
}

/// Element 0 of the plan's first float input (not lr) becomes inf.
void injectInf(Executor &ex) {
  const Plan &plan = ex.plan();
  for (int id : plan.inputs) {
    const Buffer &b = plan.buffers[id];
    if (b.name == "lr" || b.name == kLrTotalSteps || !isFloat(b.dtype) ||
        numElements(b.shape) == 0)
      continue;
    std::vector<std::byte> bytes = ex.readBytes(id);
    storeElement(bytes.data(), b.dtype, 0, std::numeric_limits<double>::infinity());
    ex.write(id, bytes.data(), bytes.size());
    return;
  }
}

/// Every finite, nonzero element of every trainable f32 or f64 param (not
/// the loss scale and its counters) one unit in the last place away from
/// where it was, up or down by the parity of its index (toward zero where
/// away would not be finite): a change of the start the size of the
/// compute's rounding, for the reference's own spread (checkRuns). f16 and
/// bf16 params (O2) stay: their ulp is a change of the storage's size, not
/// the compute's.
void nudgeParams(Executor &ex) {
  for (const Buffer &b : ex.plan().buffers) {
    if (b.kind != BufferKind::Param || !b.trainable ||
        (b.dtype != DType::F32 && b.dtype != DType::F64))
      continue;
    std::vector<std::byte> bytes = ex.readBytes(b.id);
    auto next = [&](double v, double toward) {
      return b.dtype == DType::F32 ? (double)std::nextafter((float)v, (float)toward)
                                   : std::nextafter(v, toward);
    };
    for (int64_t i = 0; i < numElements(b.shape); ++i) {
      double v = loadElement(bytes.data(), b.dtype, i);
      if (v == 0 || !std::isfinite(v))
        continue;
      double nudged = next(v, i % 2 == 0 ? std::copysign(INFINITY, v) : 0.0);
      storeElement(bytes.data(), b.dtype, i, std::isfinite(nudged) ? nudged : next(v, 0.0));
    }
    ex.write(b.id, bytes.data(), bytes.size());
  }
}

struct Run {
  std::vector<double> losses;
  std::vector<std::vector<std::byte>> bookkeeping;
  double scale = 0;
  int64_t skipped = 0;
  /// After the last run: params, state and the plan's outputs, in id order.
  std::vector<std::vector<std::byte>> state;
};

/// How the candidate runs a plan: as one program (queued launches or graph
/// replay), or step by step (Executor::runStep: no grouped launches).
enum class Mode { Queued, Replayed, Stepwise };

/// One run of the plan, step by step, with the phases a run with `flags`
/// would run.
void runStepwise(Executor &ex, const RunFlags &flags) {
  for (size_t s = 0; s < ex.plan().steps.size(); ++s) {
    if (runsIn(StepAttrs(ex.plan().steps[s]).phase(), flags))
      ex.runStep(s);
  }
}

Run runWhole(const Plan &plan, const CheckOptions &options, const std::string &device,
             Mode mode, bool nudged = false) {
  bool graphs = mode == Mode::Replayed;
  Executor ex(renamedTarget(plan, device), execOptions(plan, options, device, graphs));
  if (nudged)
    nudgeParams(ex);
  bool training = isTrainingPlan(plan);
  DataFeed feed = feedFor(ex.plan(), options, training);
  if (training)
    writeRates(ex, options);
  Run run;
  for (int64_t i = 0; i < options.runs; ++i) {
    // Windows of two micro-batches: a plan that accumulates runs its
    // `first` steps on even runs and its `apply` steps on odd ones, so both
    // graphs of each phase are captured and replayed; other plans run all.
    feed.fill(ex, i);
    if (i == options.injectInfAt)
      injectInf(ex);
    RunFlags flags{/*apply=*/i % 2 == 1, /*first=*/i % 2 == 0};
    if (mode == Mode::Stepwise)
      runStepwise(ex, flags);
    else
      ex.run(flags.apply, flags.first);
    if (plan.loss >= 0)
      run.losses.push_back(ex.readScalar(plan.loss));
  }
  ex.synchronize();
  for (const Buffer &b : plan.buffers)
    if (b.kind == BufferKind::Param || b.kind == BufferKind::State ||
        std::find(plan.outputs.begin(), plan.outputs.end(), b.id) != plan.outputs.end())
      run.state.push_back(ex.readBytes(b.id));
  for (int id : bookkeeping(plan))
    run.bookkeeping.push_back(ex.readBytes(id));
  if (plan.skippedSteps >= 0)
    run.skipped = (int64_t)ex.readScalar(plan.skippedSteps);
  for (const Step &s : plan.steps)
    if (s.kernel == Kernel::UpdateLossScaling)
      run.scale = ex.readScalar(s.inputs[1]);
  return run;
}

/// The message of the RuntimeError that `run` raises, or "".
template <typename F> std::string errorOf(F run) {
  try {
    run();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "";
}

bool sameBits(const std::vector<double> &a, const std::vector<double> &b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

double relDiff(double ref, double got) {
  if (!std::isfinite(ref) && !std::isfinite(got)) // an injected inf: NaN or inf alike
    return 0;
  if (ref == got)
    return 0;
  double d = std::fabs(got - ref) / std::max(std::fabs(ref), 1e-30);
  return std::isnan(d) ? std::numeric_limits<double>::infinity() : d;
}

/// Whether every value of a buffer of `dtype` is finite (integers are).
bool allFinite(const std::vector<std::byte> &bytes, DType dtype) {
  if (!isStoredFloat(dtype))
    return true;
  for (size_t i = 0; i < bytes.size() / dtypeSize(dtype); ++i)
    if (!std::isfinite(loadElement(bytes.data(), dtype, (int64_t)i)))
      return false;
  return true;
}

/// The largest finite |value| of a buffer of `dtype`.
double maxAbsOf(const std::vector<std::byte> &bytes, DType dtype) {
  double m = 0;
  for (size_t i = 0; i < bytes.size() / dtypeSize(dtype); ++i) {
    double v = loadElement(bytes.data(), dtype, (int64_t)i);
    if (std::isfinite(v))
      m = std::max(m, std::fabs(v));
  }
  return m;
}

} // namespace

const char *agreementName(Agreement agreement) {
  switch (agreement) {
  case Agreement::Exact: return "exact";
  case Agreement::Rounded: return "rounded";
  case Agreement::Accumulated: return "accumulated";
  case Agreement::Attention: return "attention";
  }
  return "?";
}

Tolerance toleranceFor(Agreement agreement, DType dtype) {
  if (agreement == Agreement::Exact || !isFloat(dtype))
    return {};
  double u = unitRoundoff(dtype);
  // Rounded: the device's math functions are within a few ulps of glibc's,
  // and an f16/bf16 result may then round the other way (one ulp, 2u).
  // Accumulated: sums in another order, at most a few times the output's
  // rounding (f16/bf16) or about 1e-4 of the tensor's scale (f32).
  // Attention: in f16/bf16 its probabilities and score gradients are
  // rounded once more before the products (each term off by up to u).
  bool wide = dtype == DType::F32 || dtype == DType::F64;
  if (agreement == Agreement::Rounded)
    return wide ? Tolerance{16 * u, u} : Tolerance{2 * u, u};
  if (wide)
    return {1024 * u, 1024 * u};
  return agreement == Agreement::Attention ? Tolerance{8 * u, 8 * u} : Tolerance{4 * u, 4 * u};
}

BufferDiff compareBuffer(const std::vector<std::byte> &ref, const std::vector<std::byte> &got,
                         DType dtype, Agreement agreement, double termScale,
                         bool overflowedInputs) {
  BufferDiff diff;
  size_t width = dtypeSize(dtype);
  if (ref.size() != got.size() || ref.size() % width != 0)
    throw RuntimeError("compareBuffer: buffers of different sizes");
  diff.elements = (int64_t)(ref.size() / width);
  bool floating = isStoredFloat(dtype);
  diff.refMaxAbs = maxAbsOf(ref, dtype);
  Tolerance tol = toleranceFor(agreement, dtype);
  double atol = tol.atol * std::max(diff.refMaxAbs, termScale);
  for (int64_t i = 0; i < diff.elements; ++i) {
    if (std::memcmp(ref.data() + i * width, got.data() + i * width, width) == 0)
      continue;
    double r = loadElement(ref.data(), dtype, i), g = loadElement(got.data(), dtype, i);
    if (floating && std::isnan(r) && std::isnan(g))
      continue;
    ++diff.differing;
    // Exact kernels and integers must keep the bits (-0 is not +0 there);
    // a non-finite value must match exactly.
    bool tolerant = floating && agreement != Agreement::Exact;
    bool finite = std::isfinite(r) && std::isfinite(g);
    bool sum = agreement == Agreement::Accumulated || agreement == Agreement::Attention;
    if (overflowedInputs && tolerant && sum && !finite)
      continue;
    double d = std::fabs(g - r), allowed = tol.rtol * std::fabs(r) + atol;
    bool inside = tolerant && finite && d <= allowed;
    double share = finite && allowed > 0 ? d / allowed : std::numeric_limits<double>::infinity();
    if (!inside)
      ++diff.outside;
    if (finite)
      diff.maxAbsDiff = std::max(diff.maxAbsDiff, d);
    if (diff.worstIndex < 0 || share > diff.worstShare) {
      diff.worstShare = share;
      diff.worstIndex = i;
      diff.worstRef = r;
      diff.worstGot = g;
    }
  }
  return diff;
}

BufferDiff compareReluMask(const std::vector<std::byte> &ref, const std::vector<std::byte> &got,
                           const std::vector<std::byte> &refY, const std::vector<std::byte> &gotY,
                           DType dtype) {
  BufferDiff diff;
  int64_t elements = (int64_t)(refY.size() / dtypeSize(dtype));
  if (ref.size() != got.size() || refY.size() != gotY.size() || ref.size() * 8 != (size_t)elements)
    throw RuntimeError("compareReluMask: buffers of different sizes");
  diff.elements = elements;
  diff.refMaxAbs = 1;
  for (int64_t i = 0; i < elements; ++i) {
    auto bit = [&](const std::vector<std::byte> &m) {
      return std::to_integer<int>(m[i / 8] >> (i % 8)) & 1;
    };
    int r = bit(ref), g = bit(got);
    if (r == g)
      continue;
    ++diff.differing;
    diff.maxAbsDiff = 1;
    // A result at the relu's edge: one side's sum landed at zero or below.
    bool edge = loadElement(refY.data(), dtype, i) == 0 || loadElement(gotY.data(), dtype, i) == 0;
    if (!edge)
      ++diff.outside;
    if (diff.worstIndex < 0 || (!edge && diff.worstShare <= 1)) {
      diff.worstShare = edge ? 1 : std::numeric_limits<double>::infinity();
      diff.worstIndex = i;
      diff.worstRef = r;
      diff.worstGot = g;
    }
  }
  return diff;
}

bool StepCheck::ok() const {
  return referenceError.empty() == candidateError.empty() && std::all_of(buffers.begin(), buffers.end(), [](const auto &b) { return b.second.ok(); });
}

bool StepCheck::exact() const {
  return referenceError.empty() && candidateError.empty() && std::all_of(buffers.begin(), buffers.end(),
                     [](const auto &b) { return b.second.differing == 0; });
}

bool isTrainingPlan(const Plan &plan) { return plan.find("lr") >= 0; }

Plan renamedTarget(const Plan &plan, const std::string &backend) {
  Plan renamed = plan;
  renamed.target.name = backend;
  return renamed;
}

/// The scale of the terms a bias gradient (result 1 of a step whose traits
/// name its terms, KernelTraits::biasGradTerms) sums; 0 for every other
/// buffer.
double termScaleOf(const Plan &plan, const Step &step, int id, Executor &ref) {
  OperandRef terms = traitsOf(step.kernel).biasGradTerms;
  if (terms.index < 0 || step.outputs.size() < 2 || id != step.outputs[1])
    return 0;
  int buffer = (terms.output ? step.outputs : step.inputs).at(terms.index);
  return maxAbsOf(ref.readBytes(buffer), plan.buffers[buffer].dtype);
}

std::vector<StepCheck> checkSteps(const Plan &plan, const CheckOptions &options) {
  Executor ref(renamedTarget(plan, options.reference),
               execOptions(plan, options, options.reference, false));
  Executor cand(renamedTarget(plan, options.candidate),
                execOptions(plan, options, options.candidate, false));
  feedFirstBatch(ref, options, isTrainingPlan(plan));
  std::vector<StepCheck> checks;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const Step &step = plan.steps[i];
    for (int id : touched(step))
      if (std::find(step.inputs.begin(), step.inputs.end(), id) != step.inputs.end()) {
        std::vector<std::byte> bytes = ref.readBytes(id);
        cand.write(id, bytes.data(), bytes.size());
      }
    bool overflowed = false;
    for (int id : step.inputs)
      overflowed = overflowed || !allFinite(ref.readBytes(id), plan.buffers[id].dtype);
    StepCheck check;
    check.overflowed = overflowed;
    check.index = i;
    check.step = step.name;
    check.kernel = step.kernel;
    const KernelTraits &traits = traitsOf(step.kernel);
    check.agreement = traits.agreement;
    check.referenceError = errorOf([&] { ref.runStep(i); });
    check.candidateError = errorOf([&] {
      cand.runStep(i);
      cand.synchronize();
    });
    if (!check.referenceError.empty() || !check.candidateError.empty()) {
      checks.push_back(std::move(check));
      break;
    }
    bool keepsMask = traits.has(kMayKeepReluMask) &&
                     gemmEpilogueOf(step, StepAttrs(step)).reluMask();
    for (int id : touched(step)) {
      const Buffer &b = plan.buffers[id];
      if (keepsMask && id == step.outputs[1]) {
        int y = step.outputs[0];
        check.buffers.push_back({b.name, compareReluMask(ref.readBytes(id), cand.readBytes(id),
                                                         ref.readBytes(y), cand.readBytes(y),
                                                         plan.buffers[y].dtype)});
        continue;
      }
      check.buffers.push_back({b.name, compareBuffer(ref.readBytes(id), cand.readBytes(id), b.dtype,
                                                     check.agreement,
                                                     termScaleOf(plan, step, id, ref),
                                                     overflowed)});
    }
    checks.push_back(std::move(check));
  }
  return checks;
}

bool RunCheck::ok() const {
  return stepwiseMatches && replayMatches && deterministic &&
         (bookkeepingMatches || !bookkeepingSteady) && maxLossRelDiff <= lossAllowance();
}

double runLossAllowance(double referenceSpread) {
  return std::max(kRunLossTolerance, kSpreadFactor * referenceSpread);
}

RunCheck checkRuns(const Plan &plan, const CheckOptions &options) {
  Run ref = runWhole(plan, options, options.reference, Mode::Queued);
  Run nudged = runWhole(plan, options, options.reference, Mode::Queued, /*nudged=*/true);
  Run stepwise = runWhole(plan, options, options.candidate, Mode::Stepwise);
  Run queued = runWhole(plan, options, options.candidate, Mode::Queued);
  Run replayed = runWhole(plan, options, options.candidate, Mode::Replayed);
  Run again = runWhole(plan, options, options.candidate, Mode::Replayed);
  RunCheck check;
  check.reference = ref.losses;
  check.queued = queued.losses;
  check.replayed = replayed.losses;
  check.again = again.losses;
  check.stepwiseMatches =
      sameBits(stepwise.losses, queued.losses) && stepwise.state == queued.state;
  check.replayMatches = sameBits(queued.losses, replayed.losses) && queued.state == replayed.state;
  check.deterministic = sameBits(replayed.losses, again.losses) && replayed.state == again.state;
  check.bookkeepingMatches = ref.bookkeeping == replayed.bookkeeping;
  check.bookkeepingSteady = ref.bookkeeping == nudged.bookkeeping;
  check.nudgedSkipped = nudged.skipped;
  check.referenceScale = ref.scale;
  check.candidateScale = replayed.scale;
  check.referenceSkipped = ref.skipped;
  check.candidateSkipped = replayed.skipped;
  for (size_t i = 0; i < ref.losses.size() && i < replayed.losses.size(); ++i)
    check.maxLossRelDiff = std::max(check.maxLossRelDiff, relDiff(ref.losses[i], replayed.losses[i]));
  for (size_t i = 0; i < ref.losses.size() && i < nudged.losses.size(); ++i)
    check.referenceSpread = std::max(check.referenceSpread, relDiff(ref.losses[i], nudged.losses[i]));
  return check;
}

} // namespace ampc::rt
