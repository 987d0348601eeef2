#include "runtime/driver/NumericsCheck.h"

#include <cmath>

#include "runtime/core/Convert.h"
#include "runtime/core/MemoryPlanner.h"
#include "runtime/core/Probes.h"
#include "runtime/core/StepAttrs.h"
#include "runtime/driver/F32Replay.h"
#include "runtime/numerics/AttentionScores.h"

namespace ampc::rt {
namespace {

bool isLow(DType t) { return t == DType::F16 || t == DType::BF16; }

/// The largest |x| of `values` (NaN if any is NaN), and whether all are finite.
double maxAbs(const std::vector<float> &values, bool &finite) {
  double top = 0;
  finite = true;
  for (float v : values) {
    if (std::isnan(v)) {
      finite = false;
      top = NAN;
    } else {
      finite = finite && std::isfinite(v);
      if (!std::isnan(top))
        top = std::max(top, (double)std::fabs(v));
    }
  }
  return top;
}

std::vector<float> valuesOf(const StepInput &in) {
  std::vector<float> v(in.bytes.size() / dtypeSize(in.dtype));
  toF32(in.bytes.data(), in.dtype, v.data(), v.size());
  return v;
}

/// The largest |score| of attention step `s` from its q and k as read.
double scoresMaxAbs(const Plan &plan, const Step &s, const StepInput &q, const StepInput &k) {
  std::vector<float> qv = valuesOf(q), kv = valuesOf(k);
  StepAttrs attrs(s);
  const std::vector<int64_t> &qs = plan.buffers[s.inputs[0]].shape;
  int64_t batch = qs[0], sq = qs[1], heads = qs[2], d = qs[3];
  float scale = float(attrs.getF64("scale", 1.0 / std::sqrt(double(d))));
  double top = 0;
  num::forEachAttentionScore(qv.data(), kv.data(), batch, sq,
                             plan.buffers[s.inputs[1]].shape[1], heads, d,
                             attrs.getBool("causal", false), scale, [&](float score) {
                               top = std::isnan(score) || std::isnan(top)
                                         ? NAN
                                         : std::max(top, (double)std::fabs(score));
                             });
  return top;
}

} // namespace

const char *causeName(NonFiniteCause cause) {
  switch (cause) {
  case NonFiniteCause::ForwardOverflowInL:
    return "forward overflow in L";
  case NonFiniteCause::LossScaleOverflow:
    return "gradient overflow from the loss scale";
  case NonFiniteCause::BackwardOverflowInL:
    return "backward overflow in L";
  case NonFiniteCause::NonFiniteInF32:
    return "non-finite in f32 too";
  }
  return "";
}

int64_t NumericsReport::total() const {
  int64_t n = 0;
  for (int64_t c : counts)
    n += c;
  return n;
}

/// The first op of a replayed run whose output is non-finite while its
/// inputs, as it read them, are finite.
struct NumericsCheck::Culprit {
  int step = -1, output = -1;
  std::vector<StepInput> inputs;
  /// An input from outside the run that carried a non-finite value, or one
  /// whose fused rounding to L overflowed (`roundingOverflow`).
  std::string input;
  bool roundingOverflow = false;
  double rawInputAbs = 0; // that input's largest |x| before rounding
};

NumericsCheck::NumericsCheck(const Plan &plan, Executor &ex, const ExecOptions &options)
    : plan_(plan), ex_(ex), options_(options), flags_(plan.find(kNonFiniteFlags)),
      scale_(plan.find("loss_scale")), lossStep_(plan.steps.size()) {
  if (flags_ < 0)
    throw RuntimeError("--check-numerics: the plan has no non-finite probes");
  if (scale_ >= 0 && (!plan.buffers[scale_].isPersistent() ||
                      numElements(plan.buffers[scale_].shape) != 1))
    scale_ = -1;
  for (size_t i = 0; i < plan.steps.size() && lossStep_ == plan.steps.size(); ++i)
    for (int out : plan.steps[i].outputs)
      if (out == plan.loss)
        lossStep_ = i;
}

NumericsCheck::~NumericsCheck() = default;

bool NumericsCheck::anyFlag(Executor &ex) const {
  for (std::byte b : ex.readBytes(flags_))
    if (b != std::byte{0})
      return true;
  return false;
}

void NumericsCheck::beforeRun() {
  std::vector<std::byte> zeros(plan_.buffers[flags_].bytes);
  ex_.write(flags_, zeros.data(), zeros.size());
  ex_.snapshotPersistent();
}

void NumericsCheck::replay(bool apply, bool first, const std::function<void(Executor &)> &refill,
                           double scale) {
  if (!replay_)
    replay_ = std::make_unique<Executor>(
        withoutReuse(plan_),
        ExecOptions{options_.training, options_.seed, false, options_.device, false});
  replay_->writePersistent(state_);
  if (scale > 0)
    replay_->writeScalar(scale_, scale);
  refill(*replay_);
  replay_->run(apply, first);
}

NumericsCheck::Culprit NumericsCheck::findCulprit() const {
  std::vector<bool> produced(plan_.buffers.size(), false);
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    const Step &s = plan_.steps[i];
    int bad = -1;
    for (int out : s.outputs) {
      produced[out] = true;
      if (bad < 0 && isFloat(plan_.buffers[out].dtype)) {
        bool finite;
        maxAbs(replay_->readF32(out), finite);
        if (!finite)
          bad = out;
      }
    }
    if (bad < 0)
      continue;
    Culprit c;
    c.step = i;
    c.output = bad;
    StepAttrs attrs(s);
    bool inputsFinite = true;
    for (size_t k = 0; k < s.inputs.size(); ++k) {
      const Buffer &b = plan_.buffers[s.inputs[k]];
      StepInput in{b.dtype, replay_->readBytes(b.id)};
      if (isFloat(b.dtype)) {
        bool finite;
        std::vector<float> raw = valuesOf(in);
        double rawAbs = maxAbs(raw, finite);
        DType rounded = attrs.roundedInput(k);
        if (finite && rounded != b.dtype && rounded != DType::F32) {
          // A cast fused into this step: the kernel reads the value rounded.
          in = {rounded, std::vector<std::byte>(raw.size() * dtypeSize(rounded))};
          fromF32(raw.data(), in.bytes.data(), rounded, raw.size());
          maxAbs(valuesOf(in), finite);
          if (!finite && c.input.empty()) {
            c.input = b.name;
            c.roundingOverflow = true;
            c.rawInputAbs = rawAbs;
          }
        } else if (!finite && !produced[b.id] && c.input.empty()) {
          c.input = b.name; // carried in from outside the run
        }
        inputsFinite = inputsFinite && finite;
      }
      c.inputs.push_back(std::move(in));
    }
    if (inputsFinite || !c.input.empty())
      return c;
  }
  return {};
}

NonFiniteFinding NumericsCheck::classify(const Culprit &c, bool apply, bool first,
                                         const std::function<void(Executor &)> &refill) {
  const Step &s = plan_.steps[c.step];
  NonFiniteFinding f;
  f.op = s.name;
  f.kernel = kernelName(s.kernel);
  f.output = plan_.buffers[c.output].name;
  f.dtype = dtypeName(plan_.buffers[c.output].dtype);
  f.backward = (size_t)c.step > lossStep_;
  if (scale_ >= 0) // S as the run found it (the run itself may update it)
    f.lossScale = loadElement(state_.data() + plan_.buffers[scale_].offset,
                              plan_.buffers[scale_].dtype, 0);
  for (size_t k = 0; k < c.inputs.size(); ++k)
    if (isFloat(c.inputs[k].dtype)) {
      f.inputs.push_back(plan_.buffers[s.inputs[k]].name);
      bool finite;
      double top = maxAbs(valuesOf(c.inputs[k]), finite);
      if (finite)
        f.maxInputAbs = std::max(f.maxInputAbs, top);
    }
  f.input = c.input;
  if (s.kernel == Kernel::Attention || s.kernel == Kernel::AttentionBackward)
    f.scoresMaxAbs = scoresMaxAbs(plan_, s, c.inputs[0], c.inputs[1]);
  if (c.roundingOverflow) {
    f.cause = f.backward ? NonFiniteCause::BackwardOverflowInL : NonFiniteCause::ForwardOverflowInL;
    f.f32MaxAbs = c.rawInputAbs;
    return f;
  }
  if (!c.input.empty()) {
    f.cause = NonFiniteCause::NonFiniteInF32;
    return f;
  }
  if (f.backward && scale_ >= 0) {
    // Dynamic scaling halves S after a non-finite step, down to 1: would a
    // smaller scale have kept the run finite?
    double scale = f.lossScale;
    for (int k = 1; scale / 2 >= 1; ++k) {
      scale /= 2;
      replay(apply, first, refill, scale);
      if (!anyFlag(*replay_)) {
        f.cause = NonFiniteCause::LossScaleOverflow;
        f.halvings = k;
        return f;
      }
    }
  }
  bool finite = false;
  if (isLow(plan_.buffers[c.output].dtype)) {
    finite = true;
    for (const std::vector<float> &out :
         replayInF32(plan_, s, c.inputs, options_.training, options_.seed)) {
      double top = maxAbs(out, finite);
      f.f32MaxAbs = finite ? std::max(f.f32MaxAbs, top) : top;
      if (!finite)
        break;
    }
  } else {
    f.f32MaxAbs = maxAbs(replay_->readF32(c.output), finite);
  }
  f.cause = !finite                ? NonFiniteCause::NonFiniteInF32
            : f.backward           ? NonFiniteCause::BackwardOverflowInL
                                   : NonFiniteCause::ForwardOverflowInL;
  return f;
}

void NumericsCheck::afterRun(int64_t step, int64_t microBatch, bool apply, bool first,
                             const std::function<void(Executor &)> &refill) {
  if (!anyFlag(ex_))
    return;
  state_ = ex_.snapshotBytes();
  replay(apply, first, refill, -1);
  Culprit c = findCulprit();
  if (c.step < 0)
    throw RuntimeError("--check-numerics: run " + std::to_string(microBatch) +
                       " flagged a non-finite value that its replay does not show");
  NonFiniteFinding f = classify(c, apply, first, refill);
  f.step = step;
  f.microBatch = microBatch;
  ++report_.counts[(int)f.cause];
  if (!report_.first)
    report_.first = f;
}

} // namespace ampc::rt
