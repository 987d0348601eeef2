#include "runtime/driver/Validation.h"

#include <algorithm>

#include "runtime/driver/Runner.h"

namespace ampc::rt {

namespace {
constexpr const char *kTestSet = "fashion-mnist-test";
}

std::string validationFeed(const std::string &valData) {
  if (valData.rfind(kTestSet, 0) == 0)
    return "fashion-mnist" + valData.substr(std::string(kTestSet).size());
  return valData;
}

Validation::Validation(Plan eval, const std::string &valData, uint64_t seed,
                       const std::string &device, bool graphs, bool tuneGemms)
    : plan_(std::move(eval)),
      ex_(plan_, {/*training=*/false, seed, false, device, graphs, nullptr, tuneGemms}),
      feed_(plan_, validationFeed(valData), /*train=*/false, seed),
      logits_(logitsBuffer(plan_, feed_.batchSize())) {
  if (feed_.batchesToCover() == 0)
    throw RuntimeError("--val-data " + valData + " holds no samples to validate on");
}

bool Validation::scoresAverages(const Plan &trained) const {
  return std::any_of(plan_.buffers.begin(), plan_.buffers.end(), [&](const Buffer &b) {
    return b.kind == BufferKind::Param && trained.find(b.name + kAverageSuffix) >= 0;
  });
}

void Validation::takeParams(Executor &trained) {
  const Plan &train = trained.plan();
  for (const Buffer &b : plan_.buffers) {
    if (b.kind != BufferKind::Param || b.copyOf >= 0) // copies follow their params
      continue;
    int id = train.find(b.name);
    if (id < 0 || train.buffers[id].bytes != b.bytes || train.buffers[id].dtype != b.dtype)
      throw RuntimeError("the trained plan has no param '" + b.name + "' of the same type");
    std::vector<std::byte> bytes = trained.readBytes(id);
    ex_.write(b.id, bytes.data(), bytes.size());
  }
}

void Validation::takeAverages(Executor &trained) {
  for (const Buffer &b : plan_.buffers)
    if (int average = trained.plan().find(b.name + kAverageSuffix);
        b.kind == BufferKind::Param && average >= 0) // f32, rounded to the param's dtype
      ex_.writeF32(b.id, trained.readF32(average));
}

EvalRecord Validation::run(Executor &trained, int64_t step) {
  takeParams(trained);
  EvalRecord r = score();
  r.step = step;
  if (scoresAverages(trained.plan())) { // the rest (frozen, statistics) stay as taken
    takeAverages(trained);
    EvalRecord averaged = score();
    r.emaLoss = averaged.loss;
    r.emaAccuracy = averaged.accuracy;
  }
  return r;
}

EvalRecord Validation::score() {
  EvalRecord r;
  bool scored = logits_ >= 0 && feed_.labelled();
  std::optional<int64_t> ignored = ignoredLabel(plan_);
  double lossSum = 0;
  int64_t correct = 0, batches = feed_.batchesToCover();
  for (int64_t i = 0; i < batches; ++i) {
    feed_.fill(ex_, i);
    ex_.run();
    if (plan_.loss >= 0)
      lossSum += ex_.readScalar(plan_.loss);
    if (scored) {
      int64_t rows = feed_.samplesIn(i);
      correct += correctPredictions(ex_.readF32(logits_), plan_.buffers[logits_].shape[1],
                                    feed_.batchLabels(), rows, ignored);
      r.samples += scoredRows(feed_.batchLabels(), rows, ignored);
    }
  }
  if (plan_.loss >= 0)
    r.loss = lossSum / (double)batches;
  if (scored && r.samples)
    r.accuracy = double(correct) / double(r.samples);
  return r;
}

} // namespace ampc::rt
