#include "compiler/plan/PlanIndex.h"

#include <algorithm>

namespace ampc::plan {

PlanIndex::PlanIndex(rt::Plan &plan) : plan_(plan), erased_(plan.steps.size(), false) {}

rt::Step &PlanIndex::edit(int i) {
  stale_ = true;
  return plan_.steps[i];
}

void PlanIndex::erase(int i) {
  stale_ = true;
  erased_[i] = true;
}

void PlanIndex::move(int from, int to) {
  plan_.steps[to] = std::move(plan_.steps[from]);
  erased_[to] = false;
  erased_[from] = true;
  stale_ = true;
}

int PlanIndex::addBuffer(const std::string &name, rt::DType dtype, std::vector<int64_t> shape) {
  stale_ = true;
  return plan_.addBuffer(name, rt::BufferKind::Temp, dtype, std::move(shape));
}

void PlanIndex::commit() {
  erased_.resize(plan_.steps.size(), false); // a rewrite() may have added steps
  std::vector<rt::Step> kept;
  for (size_t i = 0; i < plan_.steps.size(); ++i)
    if (!erased_[i])
      kept.push_back(std::move(plan_.steps[i]));
  plan_.steps = std::move(kept);
  erased_.assign(plan_.steps.size(), false);
  stale_ = true;
}

rt::Plan &PlanIndex::rewrite() {
  commit();
  return plan_;
}

void PlanIndex::refresh() {
  if (!stale_)
    return;
  erased_.resize(plan_.steps.size(), false);
  size_t n = plan_.buffers.size();
  readers_.assign(n, {});
  writer_.assign(n, -1);
  soleReader_.assign(n, -1);
  std::vector<int> reads(n, 0);
  for (size_t i = 0; i < plan_.steps.size(); ++i) {
    if (erased_[i])
      continue;
    for (int id : plan_.steps[i].inputs) {
      if (readers_[id].empty() || readers_[id].back() != (int)i)
        readers_[id].push_back((int)i);
      ++reads[id];
      soleReader_[id] = (int)i;
    }
    for (int id : plan_.steps[i].outputs)
      writer_[id] = (int)i;
  }
  for (int id : plan_.outputs)
    ++reads[id];
  if (plan_.loss >= 0)
    ++reads[plan_.loss];
  for (size_t id = 0; id < n; ++id)
    if (reads[id] != 1)
      soleReader_[id] = -1;
  stale_ = false;
}

const std::vector<int> &PlanIndex::readers(int id) {
  refresh();
  return readers_[id];
}

int PlanIndex::writer(int id) {
  refresh();
  return writer_[id];
}

int PlanIndex::soleReader(int id) {
  refresh();
  return soleReader_[id];
}

bool PlanIndex::kept(int id) const {
  return plan_.loss == id || std::count(plan_.outputs.begin(), plan_.outputs.end(), id);
}

bool PlanIndex::writtenBetween(const std::vector<int> &ids, int from, int to) const {
  for (int j = from + 1; j < to; ++j) {
    const rt::Step &s = plan_.steps[j];
    if (erased_[j] || !s.outputs.empty())
      continue;
    for (int id : ids)
      if (std::count(s.inputs.begin(), s.inputs.end(), id))
        return true;
  }
  return false;
}

bool oneGemm(const rt::Plan &plan, const rt::Step &mm) {
  if (mm.kernel != rt::Kernel::Matmul || mm.inputs.size() != 2 || mm.outputs.size() != 1)
    return false;
  const rt::Buffer &a = plan.buffers[mm.inputs[0]], &b = plan.buffers[mm.inputs[1]];
  bool ta = mm.attrs.value("transpose_a", false);
  return b.shape.size() == 2 && !ta && !a.shape.empty() && a.shape.back() > 0;
}

std::string roundingOf(rt::DType dtype) {
  return dtype == rt::DType::F16 || dtype == rt::DType::BF16 ? rt::dtypeName(dtype) : "";
}

} // namespace ampc::plan
