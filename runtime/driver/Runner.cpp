#include "runtime/driver/Runner.h"

#include <algorithm>

namespace ampc::rt {

int logitsBuffer(const Plan &plan, int64_t batch) {
  for (int id : plan.outputs) {
    const Buffer &b = plan.buffers[id];
    if (id != plan.loss && isFloat(b.dtype) && b.shape.size() == 2 && b.shape[0] == batch)
      return id;
  }
  return -1;
}

int64_t correctPredictions(const std::vector<float> &logits, int64_t classes,
                           const std::vector<int64_t> &labels, int64_t rows,
                           std::optional<int64_t> ignored) {
  int64_t correct = 0;
  for (int64_t r = 0; r < rows && r < (int64_t)labels.size() &&
                      (r + 1) * classes <= (int64_t)logits.size();
       ++r) {
    const float *row = logits.data() + r * classes;
    correct += labels[r] != ignored && std::max_element(row, row + classes) - row == labels[r];
  }
  return correct;
}

int64_t scoredRows(const std::vector<int64_t> &labels, int64_t rows,
                   std::optional<int64_t> ignored) {
  rows = std::min<int64_t>(rows, labels.size());
  if (!ignored)
    return rows;
  return rows - std::count(labels.begin(), labels.begin() + rows, *ignored);
}

std::optional<int64_t> ignoredLabel(const Plan &plan) {
  for (const Step &s : plan.steps)
    if (s.kernel == Kernel::SoftmaxCrossEntropy && s.attrs.contains("ignore_index") &&
        s.attrs["ignore_index"].is_number_integer())
      return s.attrs["ignore_index"].get<int64_t>();
  return std::nullopt;
}

double median(std::vector<double> values) {
  if (values.empty())
    return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

bool isReportStep(int64_t step, int64_t total, int64_t reports) {
  return step == total || step % std::max<int64_t>(1, total / std::max<int64_t>(reports, 1)) == 0;
}

Runner::Runner(Plan plan, RunOptions options)
    : plan_(std::move(plan)), options_(std::move(options)),
      ex_(plan_, {/*training=*/false, options_.seed, options_.profile, options_.device,
                  options_.graphs, nullptr, options_.tuneGemms}),
      feed_(plan_, options_.data, /*train=*/false, options_.seed) {}

RunResult Runner::run(const std::function<void(const RunProgress &)> &onReport) {
  RunResult result;
  result.batch = feed_.batchSize();
  int64_t pass = feed_.batchesToCover();
  result.steps = options_.steps.value_or(pass ? pass : 10);
  int logits = logitsBuffer(plan_, feed_.batchSize());
  bool scoring = feed_.labelled() && logits >= 0;
  int64_t correct = 0, scored = 0;
  std::optional<int64_t> ignored = ignoredLabel(plan_);
  // Over a dataset, the mean of its batches' losses, as validation during
  // training computes it (a read per batch, as scoring's).
  bool averaged = pass > 0 && plan_.loss >= 0;
  double lossSum = 0;
  std::vector<std::unique_ptr<Timer>> timers;
  std::vector<double> times;
  auto resolveTimes = [&] {
    for (size_t i = times.size(); i < timers.size(); ++i)
      times.push_back(timers[i]->elapsedMs());
  };
  Device &device = ex_.backend().device();
  int64_t stepSyncs = 0, stepWaits = 0;
  for (int64_t i = 0; i < result.steps; ++i) {
    DeviceStats before = device.stats();
    feed_.fill(ex_, i);
    timers.push_back(device.timer());
    timers.back()->start();
    ex_.run();
    timers.back()->stop();
    stepSyncs += device.stats().hostSyncs - before.hostSyncs;
    stepWaits += device.stats().stagingWaits - before.stagingWaits;
    int64_t rows = feed_.samplesIn(i % std::max<int64_t>(pass, 1));
    result.samples += rows;
    if (averaged)
      lossSum += ex_.readScalar(plan_.loss);
    if (scoring) {
      correct += correctPredictions(ex_.readF32(logits), plan_.buffers[logits].shape[1],
                                    feed_.batchLabels(), rows, ignored);
      scored += scoredRows(feed_.batchLabels(), rows, ignored);
    }
    if (onReport && isReportStep(i + 1, result.steps, options_.reports)) {
      resolveTimes();
      std::optional<double> loss;
      if (plan_.loss >= 0)
        loss = ex_.readScalar(plan_.loss);
      onReport({i + 1, result.steps, times.back(), loss});
    }
  }
  ex_.synchronize();
  resolveTimes();
  result.msMedian = median(times);
  result.samplesPerS = result.msMedian > 0 ? result.batch / (result.msMedian / 1000.0) : 0;
  if (plan_.loss >= 0 && result.steps > 0)
    result.loss = ex_.readScalar(plan_.loss);
  if (averaged && result.steps > 0)
    result.meanLoss = lossSum / (double)result.steps;
  if (scoring && scored > 0)
    result.accuracy = double(correct) / double(scored);
  result.deviceName = device.name();
  result.devicePeakBytes = device.stats().peakBytes;
  result.hostSyncsPerStep = result.steps ? double(stepSyncs) / double(result.steps) : 0;
  result.stagingWaitsPerStep = result.steps ? double(stepWaits) / double(result.steps) : 0;
  return result;
}

} // namespace ampc::rt
