#include "runtime/driver/Trainer.h"

#include <cstdio>
#include <cstring>

#include "runtime/core/Files.h"
#include "runtime/core/Probes.h"
#include "runtime/driver/Checkpoint.h"
#include "runtime/driver/WeightShards.h"
#include "runtime/driver/Runner.h"
#include "runtime/driver/Weights.h"

namespace ampc::rt {
namespace {

/// A checkpoint metadata field as an integer; a missing one is 0.
int64_t metaInt(const std::map<std::string, std::string> &meta, const std::string &key,
                const std::string &path) {
  auto it = meta.find(key);
  if (it == meta.end())
    return 0;
  try {
    size_t used = 0;
    long long v = std::stoll(it->second, &used);
    if (used == it->second.size() && v >= 0)
      return v;
  } catch (const std::exception &) {
  }
  throw RuntimeError(path + ": metadata '" + key + "' is not a count: '" + it->second + "'");
}

/// The step times of accumulation windows, measured by device timers and
/// read (which may wait for the device) only when asked.
class StepTimes {
public:
  void add(std::unique_ptr<Timer> timer) { window_.push_back(std::move(timer)); }
  void endWindow() { pending_.push_back(std::move(window_)); }
  /// Reads every finished window; returns the last one's milliseconds.
  double resolve() {
    for (auto &window : pending_) {
      double ms = 0;
      for (auto &t : window)
        ms += t->elapsedMs();
      times_.push_back(ms);
    }
    pending_.clear();
    return times_.empty() ? 0 : times_.back();
  }
  const std::vector<double> &times() const { return times_; }

private:
  std::vector<std::unique_ptr<Timer>> window_;
  std::vector<std::vector<std::unique_ptr<Timer>>> pending_;
  std::vector<double> times_;
};

} // namespace

Trainer::Trainer(Plan train, std::optional<Plan> eval, TrainOptions options)
    : plan_(std::move(train)), eval_(std::move(eval)), options_(std::move(options)) {}

namespace {

/// The checkpoint file of optimizer step `step`: `{step}` in the name
/// replaced by it.
std::string checkpointPath(std::string name, int64_t step) {
  for (size_t at; (at = name.find("{step}")) != std::string::npos;)
    name.replace(at, 6, std::to_string(step));
  return name;
}

bool isSafetensors(const std::string &spec) {
  return spec.size() > 12 && spec.compare(spec.size() - 12, 12, ".safetensors") == 0;
}

/// The validation set of a run: --val-data, else Fashion-MNIST's test set
/// when it trains on Fashion-MNIST; "" for none.
std::string validationSet(const TrainOptions &options) {
  if (!options.valData.empty())
    return options.valData;
  if (options.data.rfind("fashion-mnist", 0) == 0)
    return "fashion-mnist-test" + options.data.substr(std::string("fashion-mnist").size());
  return "";
}

} // namespace

TrainResult Trainer::run(const std::function<void(const TrainProgress &)> &onReport) {
  if (plan_.loss < 0)
    throw RuntimeError("the plan has no loss to train");
  Communicator *comm = options_.communicator;
  int rank = comm ? comm->rank() : 0, ranks = comm ? comm->size() : 1;
  if (int64_t planned = planWorldSize(plan_); planned != ranks)
    throw RuntimeError("the plan sums gradients over " + std::to_string(planned) +
                       " ranks; this run has " + std::to_string(ranks));
  bool writer = rank == 0; // rank 0 writes the checkpoint
  if (writer && !options_.checkpoint.empty())
    if (std::string why = checkWritable(checkpointPath(options_.checkpoint, 0)); !why.empty())
      throw RuntimeError(options_.checkpoint + ": cannot write the checkpoint: " + why);
  ExecOptions exec{/*training=*/true,  options_.seed,         options_.profile,
                   options_.device,    options_.graphs,       comm,
                   options_.tuneGemms, options_.overlapChecks};
  Executor ex(plan_, exec);
  DataFeed feed(plan_, options_.data, /*train=*/true, options_.seed, {"lr", kLrTotalSteps});
  feed.shard(rank, ranks);
  std::optional<NumericsCheck> check;
  if (options_.checkNumerics)
    check.emplace(plan_, ex, exec);
  Device &device = ex.backend().device();
  int lr = plan_.find("lr"), scale = plan_.find("loss_scale"), skipped = plan_.skippedSteps;
  if (lr < 0 || skipped < 0)
    throw RuntimeError("not a training plan: it has no lr input or finite check");
  std::optional<BestTracker> tracker;
  if (!options_.saveBest.empty() || options_.earlyStop > 0) {
    if (validationSet(options_).empty())
      throw RuntimeError(std::string(options_.saveBest.empty() ? "--early-stop" : "--save-best") +
                         " follows the validation: give --val-data");
    tracker.emplace(options_.bestMetric, options_.earlyStop);
  }
  std::optional<LrPlateau> plateau;
  if (options_.plateau) {
    if (validationSet(options_).empty() || options_.evalEvery <= 0)
      throw RuntimeError("--lr-schedule reduce_lr_on_plateau follows the evaluations: give "
                         "--eval-every N and --val-data");
    plateau.emplace(options_.bestMetric, *options_.plateau, options_.lr);
  }

  int64_t k = options_.accumulate, start = 0, scheduleLength = options_.lrTotalSteps;
  if (!options_.initFrom.empty()) {
    if (!options_.resume.empty())
      throw RuntimeError("--init-from starts a new run and --resume continues one: give one");
    std::vector<std::string> model;
    for (const Buffer &b : (eval_ ? *eval_ : plan_).buffers)
      if (b.kind == BufferKind::Param && (eval_ || b.trainable))
        model.push_back(b.name);
    loadWeights(readWeights(options_.initFrom, "weights file"), ex, model,
                eval_ ? *eval_ : plan_, options_.initLayout);
  }
  if (!options_.resume.empty()) {
    const std::string &path = options_.resume;
    Safetensors file = readSafetensors(path);
    auto &meta = file.metadata;
    if (meta.count("graph") && meta["graph"] != plan_.name)
      throw RuntimeError(path + ": saved from graph '" + meta["graph"] + "', not '" + plan_.name +
                         "'");
    if (meta.count("accumulate") && metaInt(meta, "accumulate", path) != k)
      throw RuntimeError(path + ": saved with --accumulate " + meta["accumulate"]);
    for (const auto &[flag, value] : options_.settings)
      if (auto saved = meta.find("setting." + flag); saved != meta.end() && saved->second != value)
        throw RuntimeError(path + ": saved by a run " +
                           (saved->second.empty() ? "without --" + flag
                                                  : "with --" + flag + " " + saved->second) +
                           "; this run has " +
                           (value.empty() ? "no --" + flag : "--" + flag + " " + value) +
                           " (resume with the same settings, or start a new run from its "
                           "weights with --init-from)");
    if (int64_t saved = meta.count("world_size") ? metaInt(meta, "world_size", path) : 1;
        saved != ranks)
      throw RuntimeError(path + ": saved by a run of " + std::to_string(saved) +
                         " ranks; this run has " + std::to_string(ranks) +
                         " (resume with the same world size)");
    loadParams(file, ex);
    if (tracker)
      tracker->resume(meta);
    if (plateau)
      plateau->resume(meta);
    start = metaInt(meta, "micro_batch", path);
    if (!scheduleLength && meta.count(kLrTotalSteps))
      scheduleLength = metaInt(meta, kLrTotalSteps, path);
    ex.writeScalar(skipped, (double)metaInt(meta, "skipped_steps", path));
    ex.setIterations(metaInt(meta, "iteration", path));
  }
  double rate = plateau ? plateau->lr() : options_.lr; // the lr input's value
  ex.writeScalar(lr, rate);
  int64_t skippedBefore = (int64_t)ex.readScalar(skipped);
  int64_t perEpoch = feed.batchesPerEpoch();
  int64_t micro = options_.steps > 0 ? options_.steps * k
                                     : (perEpoch ? options_.epochs * perEpoch / k * k : 100 * k);
  int64_t end = start + micro, total = micro / k;
  if (!scheduleLength)
    scheduleLength = end / k;
  int schedule = plan_.find(kLrTotalSteps);
  if (schedule >= 0)
    ex.writeScalar(schedule, (double)scheduleLength);
  TrainResult result;
  result.batch = feed.batchSize();
  result.worldSize = ranks;
  result.allreduceBytesPerStep = allreduceBytes(plan_);
  result.peakBytes = plan_.peakBytes();
  StepTimes times;
  HistoryReader history(plan_, start / k);
  // The training state after micro-batch `micro` (written atomically).
  auto save = [&](int64_t micro, const std::string &file) {
    std::map<std::string, std::string> meta = {
        {"format", "ampc"},
        {"graph", plan_.name},
        {"micro_batch", std::to_string(micro)},
        {"iteration", std::to_string(ex.iterations())},
        {"skipped_steps", std::to_string((int64_t)ex.readScalar(skipped))},
        {"accumulate", std::to_string(k)}};
    if (ranks > 1)
      meta["world_size"] = std::to_string(ranks);
    if (schedule >= 0)
      meta[kLrTotalSteps] = std::to_string(scheduleLength);
    for (const auto &[flag, value] : options_.settings)
      meta["setting." + flag] = value;
    if (tracker)
      tracker->save(meta);
    if (plateau)
      plateau->save(meta);
    saveCheckpoint(checkpointPath(file, micro / k), ex, meta);
  };
  // An evaluation's place in the tracking: the best is saved as it comes.
  auto track = [&](const EvalRecord &e, int64_t micro) {
    if (tracker && tracker->improved(e) && !options_.saveBest.empty())
      save(micro, options_.saveBest);
  };
  std::optional<Validation> validation;
  if (std::string val = validationSet(options_); writer && eval_ && !val.empty())
    validation.emplace(*eval_, val, options_.seed, options_.device, options_.graphs,
                       options_.tuneGemms);
  if (tracker && validation)
    tracker->requireAvailable(validation->scoresLoss(), validation->scoresAccuracy(),
                              validation->scoresAverages(plan_));
  if (plateau && validation)
    requireMetric(options_.bestMetric, validation->scoresLoss(), validation->scoresAccuracy(),
                  validation->scoresAverages(plan_));
  int64_t epochShuffled = -1, stepSyncs = 0, stepWaits = 0;
  for (int64_t i = start; i < end; ++i) {
    int64_t epoch = perEpoch ? i / perEpoch : 0;
    if (perEpoch && epoch != epochShuffled) {
      feed.shuffle(options_.seed * 7919 + (uint64_t)epoch);
      epochShuffled = epoch;
    }
    DeviceStats before = device.stats();
    int64_t batch = perEpoch ? i % perEpoch : i;
    feed.fill(ex, batch);
    bool apply = (i + 1) % k == 0, first = i % k == 0;
    if (check)
      check->beforeRun();
    std::unique_ptr<Timer> timer = device.timer();
    timer->start();
    ex.run(apply, first);
    timer->stop();
    times.add(std::move(timer));
    if (check)
      check->afterRun(i / k + 1, i, apply, first, [&](Executor &replay) {
        feed.fill(replay, batch);
        replay.writeScalar(lr, rate);
        if (schedule >= 0)
          replay.writeScalar(schedule, (double)scheduleLength);
      });
    stepSyncs += device.stats().hostSyncs - before.hostSyncs;
    stepWaits += device.stats().stagingWaits - before.stagingWaits;
    if (!apply)
      continue;
    times.endWindow();
    int64_t step = (i + 1 - start) / k;
    bool report = options_.logEvery > 0 ? step % options_.logEvery == 0 || step == total
                                        : isReportStep(step, total, options_.reports);
    if (report || history.due(step))
      history.read(ex, result.history);
    if (writer && !options_.checkpoint.empty() && options_.saveEvery > 0 &&
        (start / k + step) % options_.saveEvery == 0 && i + 1 < end)
      save(i + 1, options_.checkpoint);
    bool evaluates = options_.evalEvery > 0 && (start / k + step) % options_.evalEvery == 0;
    if (validation && evaluates) {
      result.evals.push_back(validation->run(ex, start / k + step));
      track(result.evals.back(), i + 1);
    }
    // Rank 0 evaluates and decides; every rank takes its rate.
    if (evaluates && plateau) {
      double next = rate;
      if (validation && plateau->step(result.evals.back()))
        next = plateau->lr();
      if (comm && ranks > 1)
        comm->broadcastBytes(&next, sizeof next, 0);
      if (next != rate) {
        rate = next;
        ex.writeScalar(lr, rate);
        result.lrCuts.emplace_back(start / k + step, rate);
      }
    }
    // Rank 0 evaluates; every rank stops with it.
    bool stop = evaluates && tracker && tracker->exhausted();
    if (evaluates && tracker && tracker->patience() > 0 && comm && ranks > 1)
      comm->broadcastBytes(&stop, sizeof stop, 0);
    if (onReport && report) {
      double ms = times.resolve();
      onReport({step, total, ex.readScalar(plan_.loss), scale >= 0 ? ex.readScalar(scale) : 1.0,
                ms, (int64_t)ex.readScalar(skipped)});
    }
    if (stop) {
      result.stoppedAt = start / k + step;
      end = i + 1;
      break;
    }
  }
  ex.synchronize();
  history.read(ex, result.history);
  times.resolve();
  result.steps = (int64_t)times.times().size();
  result.stepMsMedian = median(times.times());
  result.samplesPerS =
      result.stepMsMedian > 0 ? result.batch * k / (result.stepMsMedian / 1000.0) : 0;
  if (end > start)
    result.finalLoss = ex.readScalar(plan_.loss);
  if (scale >= 0 && end > start)
    result.lossScale = ex.readScalar(scale);
  result.skipped = (int64_t)ex.readScalar(skipped);
  result.skippedInRun = result.skipped - skippedBefore;
  result.deviceName = device.name();
  result.devicePeakBytes = device.stats().peakBytes;
  result.hostSyncsPerStep = total ? double(stepSyncs) / double(total) : 0;
  result.stagingWaitsPerStep = total ? double(stepWaits) / double(total) : 0;
  result.profile = ex.profile();
  if (check)
    result.numerics = check->report();
  if (int ranges = plan_.find(kRanges); ranges >= 0) {
    std::vector<std::byte> bytes = ex.readBytes(ranges);
    result.ranges.resize(bytes.size() / sizeof(double));
    std::memcpy(result.ranges.data(), bytes.data(), bytes.size());
  }
  if (validation) {
    // Weights that no step updated are not scored as if they had trained.
    bool neverTrained = total > 0 && result.skippedInRun == total && start == 0 &&
                        options_.initFrom.empty();
    if (neverTrained) {
      result.evalNote = "every step was skipped for a non-finite gradient: the weights never "
                        "trained";
    } else {
      if (result.evals.empty() || result.evals.back().step != end / k) {
        result.evals.push_back(validation->run(ex, end / k));
        track(result.evals.back(), end);
      }
      const EvalRecord &last = result.evals.back();
      result.evalAccuracy = last.accuracy;
      result.evalSamples = last.samples;
      if (!last.accuracy && validation->labelled())
        result.evalNote = "the graph has no [batch, classes] output to score";
    }
  } else if (writer && eval_ && options_.valData.empty() && isSafetensors(options_.data)) {
    result.evalNote = "it trains on " + options_.data +
                      " and has no validation set to score (--val-data FILE.safetensors)";
  }
  if (tracker)
    result.best = tracker->best();
  if (writer && !options_.checkpoint.empty()) // after the last evaluation: its tracking too
    save(end, options_.checkpoint);
  return result;
}

} // namespace ampc::rt
