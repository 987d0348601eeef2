// The training history (docs/training.md, "Curves"; runtime/core/History.h).
//
// Algorithm: in a training plan (one with a loss, a finite check and an
// `lr` input), a last step `record_step` in the finite check's phase writes
// the optimizer step's loss, the rate its updates read (the lr_schedule
// step's result, else `lr`), the loss scale after its update (where the plan
// scales), whether it was skipped and, where the plan clips, the gradients'
// norm, into a ring of state rows. Those scalars then live to the end of the
// step.
#include "compiler/plan/PlanPass.h"
#include "runtime/core/History.h"
#include "runtime/core/KernelTraits.h"

namespace ampc::plan {
namespace {

void addHistory(rt::Plan &plan) {
  int check = -1, lr = plan.find("lr"), norm = -1;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const rt::Step &s = plan.steps[i];
    if (rt::traitsOf(s.kernel).has(rt::kFlagsNonFinite) && !s.outputs.empty())
      check = (int)i;
    if (s.kernel == rt::Kernel::LrSchedule)
      lr = s.outputs[0];
    if (s.kernel == rt::Kernel::GradNorm || s.kernel == rt::Kernel::CheckFiniteNorm)
      norm = s.outputs[0];
  }
  if (check < 0 || lr < 0 || plan.loss < 0 || plan.find(rt::kHistory) >= 0)
    return;
  int history = plan.addBuffer(rt::kHistory, rt::BufferKind::State, rt::DType::F64,
                               {rt::kHistoryRows, rt::kHistoryFields});
  int count = plan.addBuffer(rt::kHistoryCount, rt::BufferKind::State, rt::DType::I64, {});
  rt::Step record{"history.record",
                  rt::Kernel::RecordStep,
                  {history, count, plan.steps[check].outputs.back(), plan.loss, lr},
                  {},
                  rt::Json::object()};
  std::vector<std::string> fields;
  if (int scale = plan.find("loss_scale"); scale >= 0) {
    record.inputs.push_back(scale);
    fields.push_back(rt::kFieldLossScale);
  }
  if (norm >= 0) {
    record.inputs.push_back(norm);
    fields.push_back(rt::kFieldGradNorm);
  }
  if (!fields.empty())
    record.attrs["fields"] = fields;
  if (plan.steps[check].attrs.contains("phase"))
    record.attrs["phase"] = plan.steps[check].attrs["phase"];
  plan.steps.push_back(std::move(record));
}

void run(PlanIndex &index, const PassContext &) { addHistory(index.rewrite()); }

} // namespace

const PlanPass history = {"history", "", false, true, always, run};

} // namespace ampc::plan
