#include "runtime/driver/Weights.h"

#include <algorithm>
#include <set>

#include "runtime/core/Convert.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/LoraNames.h"
#include "runtime/core/SignatureUtil.h"
#include "runtime/driver/HuggingFaceNames.h"

namespace ampc::rt {
namespace {

/// Params read as the right operand of a matmul without transpose_b,
/// directly or through a cast: [in, out], where PyTorch stores [out, in].
std::set<int> matmulWeights(const Plan &plan) {
  std::vector<int> castOf(plan.buffers.size(), -1);
  std::set<int> weights;
  for (const Step &s : plan.steps) {
    const KernelTraits *traits = &traitsOf(s.kernel);
    if (!traits)
      continue;
    if (traits->has(kConvertsDtype) && s.inputs.size() == 1 && s.outputs.size() == 1)
      castOf[s.outputs[0]] = s.inputs[0];
    if (traits->flops == FlopRule::Matmul && s.inputs.size() == 2 &&
        !StepAttrs(s).getBool("transpose_b", false)) {
      int b = s.inputs[1];
      weights.insert(castOf[b] >= 0 ? castOf[b] : b);
    }
  }
  return weights;
}

std::string listOf(const Safetensors &file) {
  std::string names;
  int shown = 0;
  for (const auto &[name, t] : file.tensors)
    if (shown++ < 6)
      names += (names.empty() ? "" : ", ") + name;
  if (file.tensors.size() > 6)
    names += ", ...";
  return names.empty() ? "no tensors" : names;
}

using signature::shapeText;

} // namespace

Safetensors averagedWeights(Safetensors checkpoint) {
  std::vector<std::string> averaged; // the params with an average
  for (const auto &[name, t] : checkpoint.tensors)
    if (std::string param = stateOwner(name, kAverageSuffix);
        !param.empty() && checkpoint.tensors.count(param))
      averaged.push_back(param);
  if (averaged.empty())
    throw RuntimeError(checkpoint.path + ": no weight averages ('<param>" + kAverageSuffix +
                       "' tensors): a checkpoint of a run with --ema-decay has them");
  for (const std::string &name : averaged) {
    checkpoint.tensors[name] = checkpoint.tensors.at(name + kAverageSuffix);
    checkpoint.tensors.erase(name + kAverageSuffix);
    checkpoint.tensors.erase(name + kMasterSuffix);
  }
  return checkpoint;
}

void loadWeights(const Safetensors &file, Executor &ex,
                 const std::vector<std::string> &modelParams, const Plan &layout,
                 WeightLayout layoutOfFile) {
  const Plan &plan = ex.plan();
  if (layoutOfFile == WeightLayout::HuggingFace)
    return loadWeights(fromHuggingFace(file, plan), ex, modelParams, layout, WeightLayout::Graph);
  bool torch = layoutOfFile == WeightLayout::Torch ||
               (layoutOfFile == WeightLayout::FromFile && file.metadata.count("format") &&
                file.metadata.at("format") == "pt");
  std::set<std::string> linear;
  if (torch)
    for (int id : matmulWeights(layout))
      linear.insert(layout.buffers[id].name);
  std::vector<std::string> misshapen;
  bool allTransposed = true;
  std::vector<std::pair<int, std::vector<float>>> writes;
  // A file without adapters (a pretrained model's) leaves them at their
  // init: LoRA's B starts at 0, so the model starts as the file's.
  bool freshAdapters = std::none_of(file.tensors.begin(), file.tensors.end(),
                                    [](const auto &t) { return isLoraAdapter(t.first); });
  for (const std::string &name : modelParams) {
    auto it = file.tensors.find(name);
    if (it == file.tensors.end() && freshAdapters && isLoraAdapter(name))
      continue;
    if (it == file.tensors.end()) {
      bool hub = std::any_of(file.tensors.begin(), file.tensors.end(), [](const auto &t) {
        return t.first.rfind("model.layers.", 0) == 0 || t.first.rfind("transformer.h.", 0) == 0;
      });
      throw RuntimeError(file.path + ": no tensor '" + name + "' (the file has " + listOf(file) +
                         ")" + (hub ? "; its names are Hugging Face's: pass --init-layout hf"
                                    : ""));
    }
    const Safetensors::Tensor &t = it->second;
    if (!isStoredFloat(t.dtype))
      throw RuntimeError(file.path + ": tensor '" + name + "' is not a float tensor");
    std::vector<float> values = valuesAsF32(file, t);
    bool transpose = linear.count(name) && t.shape.size() == 2;
    for (int id : {plan.find(name), plan.find(name + kMasterSuffix),
                   plan.find(name + kAverageSuffix)}) {
      if (id < 0)
        continue;
      const Buffer &b = plan.buffers[id];
      std::vector<int64_t> shape = t.shape;
      std::vector<float> v = values;
      if (transpose) {
        std::swap(shape[0], shape[1]);
        for (int64_t r = 0; r < shape[0]; ++r)
          for (int64_t c = 0; c < shape[1]; ++c)
            v[r * shape[1] + c] = values[c * shape[0] + r];
      }
      if (shape != b.shape) {
        bool swapped = t.shape.size() == 2 && b.shape.size() == 2 &&
                       t.shape[0] == b.shape[1] && t.shape[1] == b.shape[0];
        allTransposed &= swapped && !torch;
        misshapen.push_back("tensor '" + name + "' is " + shapeText(t.shape) +
                            (transpose ? " (PyTorch's layout)" : "") + ", the graph's param " +
                            shapeText(b.shape));
        continue;
      }
      writes.emplace_back(id, std::move(v));
    }
  }
  if (!misshapen.empty())
    throw RuntimeError(file.path + ": " + misshapen.front() +
                       (allTransposed ? "; every misshapen tensor is its param transposed, as "
                                        "PyTorch's Linear stores it: pass --init-layout torch"
                                      : ""));
  for (auto &[id, v] : writes)
    ex.writeF32(id, v);
}

} // namespace ampc::rt
