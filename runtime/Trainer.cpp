#include "runtime/Trainer.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "runtime/Checkpoint.h"
#include "runtime/Half.h"

namespace ampc::rt {
namespace {

float readScalar(const Executor &ex, int id) {
  float v = 0;
  if (id >= 0)
    toF32(ex.tensor(id).data, ex.tensor(id).dtype, &v, 1);
  return v;
}

} // namespace

Trainer::Trainer(Plan train, std::optional<Plan> eval, TrainOptions options)
    : plan_(std::move(train)), eval_(std::move(eval)), options_(std::move(options)) {}

TrainResult Trainer::run(const std::function<void(const TrainProgress &)> &onStep) {
  if (plan_.loss < 0)
    throw RuntimeError("the plan has no loss to train");
  if (!options_.checkpoint.empty()) {
    // Fail before training, not after it, when the checkpoint cannot be written.
    std::string probe = options_.checkpoint + ".probe";
    std::FILE *f = std::fopen(probe.c_str(), "wb");
    if (!f)
      throw RuntimeError(options_.checkpoint + ": cannot write the checkpoint");
    std::fclose(f);
    std::remove(probe.c_str());
  }
  Executor ex(plan_, {/*training=*/true, options_.seed, options_.profile});
  DataFeed feed(plan_, options_.data, /*train=*/true, options_.seed, {"lr"});
  int lr = plan_.find("lr"), found = plan_.find("found_inf"), scale = plan_.find("loss_scale");
  if (lr < 0 || found < 0)
    throw RuntimeError("not a training plan: it has no lr input or found_inf");
  float lrValue = (float)options_.lr;
  fromF32(&lrValue, ex.tensor(lr).data, ex.tensor(lr).dtype, 1);

  int64_t k = options_.accumulate, start = 0, skipped = 0;
  if (!options_.resume.empty()) {
    auto meta = loadCheckpoint(options_.resume, ex);
    start = std::stoll(meta.count("micro_batch") ? meta["micro_batch"] : "0");
    skipped = std::stoll(meta.count("skipped_steps") ? meta["skipped_steps"] : "0");
    ex.setIterations(std::stoull(meta.count("iteration") ? meta["iteration"] : "0"));
    if (meta.count("accumulate") && std::stoll(meta["accumulate"]) != k)
      throw RuntimeError(options_.resume + ": saved with --accumulate " + meta["accumulate"]);
  }
  int64_t perEpoch = feed.batchesPerEpoch();
  int64_t micro = options_.steps > 0 ? options_.steps * k
                                     : (perEpoch ? options_.epochs * perEpoch / k * k : 100 * k);
  int64_t end = start + micro;
  TrainResult result;
  result.batch = feed.batchSize();
  result.peakBytes = plan_.peakBytes();
  std::vector<double> stepTimes;
  double stepMs = 0;
  int64_t epochShuffled = -1;
  for (int64_t i = start; i < end; ++i) {
    int64_t epoch = perEpoch ? i / perEpoch : 0;
    if (perEpoch && epoch != epochShuffled) {
      feed.shuffle(options_.seed * 7919 + (uint64_t)epoch);
      epochShuffled = epoch;
    }
    feed.fill(ex, perEpoch ? i % perEpoch : i);
    bool apply = (i + 1) % k == 0;
    auto t0 = std::chrono::steady_clock::now();
    ex.run(apply, /*first=*/i % k == 0);
    stepMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    result.finalLoss = readScalar(ex, plan_.loss);
    if (!apply)
      continue;
    if (ex.tensor(found).as<uint8_t>()[0])
      ++skipped;
    stepTimes.push_back(stepMs);
    result.lossScale = scale >= 0 ? readScalar(ex, scale) : 1.0;
    if (onStep)
      onStep({(i + 1 - start) / k, micro / k, result.finalLoss, result.lossScale, stepMs, skipped});
    stepMs = 0;
  }
  std::sort(stepTimes.begin(), stepTimes.end());
  result.steps = (int64_t)stepTimes.size();
  result.skipped = skipped;
  result.stepMsMedian = stepTimes.empty() ? 0 : stepTimes[stepTimes.size() / 2];
  result.samplesPerS =
      result.stepMsMedian > 0 ? result.batch * k / (result.stepMsMedian / 1000.0) : 0;
  if (!options_.checkpoint.empty())
    saveCheckpoint(options_.checkpoint, ex,
                   {{"format", "ampc"},
                    {"graph", plan_.name},
                    {"micro_batch", std::to_string(end)},
                    {"iteration", std::to_string(ex.iterations())},
                    {"skipped_steps", std::to_string(skipped)},
                    {"accumulate", std::to_string(k)}});
  result.profile = ex.profile();
  if (eval_ && feed.labelled())
    result.evalAccuracy = evaluate(ex);
  return result;
}

double Trainer::evaluate(const Executor &trained) {
  Executor ex(*eval_, {/*training=*/false, options_.seed});
  for (const Buffer &b : eval_->buffers) {
    if (b.kind != BufferKind::Param)
      continue;
    int id = plan_.find(b.name);
    if (id < 0 || plan_.buffers[id].bytes != b.bytes || plan_.buffers[id].dtype != b.dtype)
      throw RuntimeError("the trained plan has no param '" + b.name + "' of the same type");
    std::memcpy(ex.tensor(b.id).data, trained.tensor(id).data, b.bytes);
  }
  DataFeed test(*eval_, options_.data, /*train=*/false, options_.seed);
  int logits = -1;
  for (int id : eval_->outputs) {
    const Buffer &b = eval_->buffers[id];
    if (id != eval_->loss && isFloat(b.dtype) && b.shape.size() == 2 &&
        b.shape[0] == test.batchSize())
      logits = id;
  }
  if (logits < 0)
    return 0.0;
  int64_t correct = 0, seen = 0;
  for (int64_t i = 0; i < test.batchesPerEpoch(); ++i) {
    test.fill(ex, i);
    ex.run();
    TensorRef out = ex.tensor(logits), labels = ex.tensor(test.labelBuffer());
    std::vector<float> v(out.size());
    toF32(out.data, out.dtype, v.data(), v.size());
    int64_t classes = out.dim(1);
    for (int64_t r = 0; r < out.dim(0); ++r) {
      const float *row = v.data() + r * classes;
      int64_t best = std::max_element(row, row + classes) - row;
      int64_t label = labels.dtype == DType::I64 ? labels.as<int64_t>()[r] : labels.as<int32_t>()[r];
      correct += best == label;
      ++seen;
    }
  }
  return seen ? double(correct) / double(seen) : 0.0;
}

} // namespace ampc::rt
