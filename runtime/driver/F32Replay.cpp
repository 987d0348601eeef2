#include "runtime/driver/F32Replay.h"

#include "runtime/core/Convert.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/MemoryPlanner.h"
#include "runtime/device/Executor.h"

namespace ampc::rt {
namespace {

DType widened(DType t) { return t == DType::F16 || t == DType::BF16 ? DType::F32 : t; }

std::vector<float> asF32(const StepInput &in) {
  size_t n = in.bytes.size() / dtypeSize(in.dtype);
  std::vector<float> values(n);
  toF32(in.bytes.data(), in.dtype, values.data(), n);
  return values;
}

} // namespace

std::vector<std::vector<float>> replayInF32(const Plan &plan, const Step &step,
                                               const std::vector<StepInput> &inputs,
                                               bool training, uint64_t seed) {
  const KernelTraits *traits = &traitsOf(step.kernel);
  if (traits && traits->has(kConvertsDtype))
    return {asF32(inputs.at(0))};
  // A plan of the step alone: its inputs are the plan's inputs, its results
  // the plan's outputs, every f16/bf16 buffer an f32 one.
  Plan one;
  one.name = plan.name + ":" + step.name;
  Step copy = step;
  copy.inputs.clear();
  copy.outputs.clear();
  copy.attrs.erase("round_inputs");
  auto add = [&](const Buffer &from, DType dtype, BufferKind kind) {
    Buffer b;
    b.id = one.buffers.size();
    b.name = from.name;
    b.kind = kind;
    b.dtype = widened(dtype);
    b.shape = from.shape;
    b.bytes = numElements(b.shape) * (int64_t)dtypeSize(b.dtype);
    one.buffers.push_back(b);
    return b.id;
  };
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    int id = add(plan.buffers.at(step.inputs[i]), inputs.at(i).dtype, BufferKind::Input);
    one.inputs.push_back(id);
    copy.inputs.push_back(id);
  }
  for (int out : step.outputs) {
    int id = add(plan.buffers.at(out), plan.buffers.at(out).dtype, BufferKind::Temp);
    one.outputs.push_back(id);
    copy.outputs.push_back(id);
  }
  one.steps.push_back(std::move(copy));
  planMemory(one);
  Executor ex(one, {training, seed});
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (isStoredFloat(inputs[i].dtype))
      ex.writeF32(one.inputs[i], asF32(inputs[i]));
    else
      ex.write(one.inputs[i], inputs[i].bytes.data(), inputs[i].bytes.size());
  }
  ex.run();
  std::vector<std::vector<float>> outputs;
  for (int id : one.outputs)
    outputs.push_back(ex.readF32(id));
  return outputs;
}

} // namespace ampc::rt
