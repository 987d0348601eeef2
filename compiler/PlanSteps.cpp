#include "compiler/PlanSteps.h"

#include <algorithm>

namespace ampc {

std::vector<std::vector<int>> readersOf(const rt::Plan &plan) {
  std::vector<std::vector<int>> readers(plan.buffers.size());
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int id : plan.steps[i].inputs)
      if (readers[id].empty() || readers[id].back() != (int)i)
        readers[id].push_back((int)i);
  return readers;
}

std::vector<int> writersOf(const rt::Plan &plan) {
  std::vector<int> writer(plan.buffers.size(), -1);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int id : plan.steps[i].outputs)
      writer[id] = (int)i;
  return writer;
}

std::vector<int> soleReaders(const rt::Plan &plan) {
  std::vector<int> reader(plan.buffers.size(), -1), count(plan.buffers.size(), 0);
  for (size_t i = 0; i < plan.steps.size(); ++i)
    for (int id : plan.steps[i].inputs) {
      ++count[id];
      reader[id] = (int)i;
    }
  for (int id : plan.outputs)
    ++count[id];
  if (plan.loss >= 0)
    ++count[plan.loss];
  for (size_t id = 0; id < reader.size(); ++id)
    if (count[id] != 1)
      reader[id] = -1;
  return reader;
}

bool oneGemm(const rt::Plan &plan, const rt::Step &mm) {
  if (mm.kernel != "matmul" || mm.inputs.size() != 2 || mm.outputs.size() != 1)
    return false;
  const rt::Buffer &a = plan.buffers[mm.inputs[0]], &b = plan.buffers[mm.inputs[1]];
  bool ta = mm.attrs.value("transpose_a", false);
  return b.shape.size() == 2 && !ta && !a.shape.empty() && a.shape.back() > 0;
}

bool writtenBetween(const rt::Plan &plan, const std::vector<int> &ids, int from, int to) {
  for (int j = from + 1; j < to; ++j) {
    const rt::Step &s = plan.steps[j];
    if (!s.outputs.empty())
      continue;
    for (int id : ids)
      if (std::count(s.inputs.begin(), s.inputs.end(), id))
        return true;
  }
  return false;
}

std::string roundingOf(rt::DType dtype) {
  return dtype == rt::DType::F16 || dtype == rt::DType::BF16 ? rt::dtypeName(dtype) : "";
}

void eraseSteps(rt::Plan &plan, const std::vector<bool> &erased) {
  std::vector<rt::Step> kept;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    if (!erased[i])
      kept.push_back(std::move(plan.steps[i]));
  plan.steps = std::move(kept);
}

void dropUnusedTemps(rt::Plan &plan) {
  std::vector<bool> used(plan.buffers.size(), false);
  for (const rt::Step &step : plan.steps)
    for (const std::vector<int> *ids : {&step.inputs, &step.outputs})
      for (int id : *ids)
        used[id] = true;
  for (int id : plan.outputs)
    used[id] = true;
  if (plan.loss >= 0)
    used[plan.loss] = true;
  std::vector<int> newId(plan.buffers.size(), -1);
  std::vector<rt::Buffer> buffers;
  for (rt::Buffer &b : plan.buffers)
    if (used[b.id] || b.kind != rt::BufferKind::Temp) {
      newId[b.id] = buffers.size();
      b.id = buffers.size();
      buffers.push_back(std::move(b));
    }
  plan.buffers = std::move(buffers);
  auto renumber = [&](int &id) {
    if (id >= 0)
      id = newId[id];
  };
  for (rt::Step &step : plan.steps) {
    std::for_each(step.inputs.begin(), step.inputs.end(), renumber);
    std::for_each(step.outputs.begin(), step.outputs.end(), renumber);
  }
  std::for_each(plan.inputs.begin(), plan.inputs.end(), renumber);
  std::for_each(plan.outputs.begin(), plan.outputs.end(), renumber);
  renumber(plan.loss);
  for (rt::Buffer &b : plan.buffers)
    renumber(b.copyOf);
}

} // namespace ampc
