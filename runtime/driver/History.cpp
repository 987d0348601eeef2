#include "runtime/driver/History.h"

#include <cmath>
#include <cstring>

#include "runtime/core/History.h"

namespace ampc::rt {

HistoryReader::HistoryReader(const Plan &plan, int64_t firstStep)
    : history_(plan.find(kHistory)), count_(plan.find(kHistoryCount)), firstStep_(firstStep) {
  if (count_ < 0)
    history_ = -1;
}

bool HistoryReader::due(int64_t stepsInRun) const {
  return present() && stepsInRun - read_ >= kHistoryRows / 2;
}

void HistoryReader::read(Executor &ex, std::vector<StepRecord> &out) {
  if (!present())
    return;
  auto count = (int64_t)ex.readScalar(count_);
  std::vector<std::byte> bytes = ex.readBytes(history_);
  std::vector<double> rows(bytes.size() / sizeof(double));
  std::memcpy(rows.data(), bytes.data(), rows.size() * sizeof(double));
  int64_t ring = (int64_t)(rows.size() / kHistoryFields);
  for (int64_t i = std::max(read_, count - ring); i < count; ++i) {
    const double *row = rows.data() + (i % ring) * kHistoryFields;
    StepRecord r;
    r.step = firstStep_ + i + 1;
    r.loss = row[kStepLoss];
    r.lr = row[kStepLr];
    if (!std::isnan(row[kStepLossScale]))
      r.lossScale = row[kStepLossScale];
    r.skipped = row[kStepSkipped] != 0;
    if (!std::isnan(row[kStepGradNorm]))
      r.gradNorm = row[kStepGradNorm];
    out.push_back(r);
  }
  read_ = count;
}

} // namespace ampc::rt
