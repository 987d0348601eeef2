#include "runtime/driver/LoraMerge.h"

#include <cstring>

#include "runtime/core/Errors.h"
#include "runtime/core/LoraNames.h"
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt {

int mergeLoraAdapters(Safetensors &weights, const std::map<std::string, LoraTarget> &targets) {
  std::vector<std::string> layers;
  for (const auto &[name, t] : weights.tensors)
    if (isLoraAdapter(name) && name.back() == 'a')
      layers.push_back(loraLayer(name));
  for (const auto &[name, t] : weights.tensors)
    if (isLoraAdapter(name) && !weights.tensors.count(loraLayer(name) + ".lora_a"))
      throw RuntimeError(weights.path + ": adapter '" + name + "' has no lora_a beside it");
  for (const std::string &layer : layers) {
    auto a = weights.tensors.find(layer + ".lora_a"), b = weights.tensors.find(layer + ".lora_b");
    auto target = targets.find(layer);
    auto w = target == targets.end() ? weights.tensors.end()
                                     : weights.tensors.find(target->second.weight);
    if (b == weights.tensors.end() || target == targets.end() || w == weights.tensors.end())
      throw RuntimeError(weights.path + ": adapter '" + layer + ".lora_a' has no " +
                         (b == weights.tensors.end() ? "lora_b"
                          : target == targets.end()  ? "layer in the graph"
                                                     : "weight '" + target->second.weight + "'") +
                         " to merge with");
    bool outIn = target->second.outIn;
    const std::vector<int64_t> &as = a->second.shape, &bs = b->second.shape,
                               &ws = w->second.shape;
    if (as.size() != 2 || bs.size() != 2 || ws.size() != 2 || as[1] != bs[0] ||
        as[0] != ws[outIn ? 1 : 0] || bs[1] != ws[outIn ? 0 : 1])
      throw RuntimeError(weights.path + ": adapter '" + layer + "' does not chain: lora_a " +
                         signature::shapeText(as) + ", lora_b " + signature::shapeText(bs) +
                         ", weight " + signature::shapeText(ws));
    std::vector<float> av = valuesAsF32(weights, a->second), bv = valuesAsF32(weights, b->second),
                       wv = valuesAsF32(weights, w->second);
    int64_t in = as[0], out = bs[1], rank = as[1];
    for (int64_t i = 0; i < in; ++i)
      for (int64_t o = 0; o < out; ++o) {
        double sum = 0;
        for (int64_t r = 0; r < rank; ++r)
          sum += (double)av[i * rank + r] * bv[r * out + o];
        float &x = wv[outIn ? o * in + i : i * out + o];
        x = (float)((double)x + target->second.scale * sum);
      }
    Safetensors::Tensor merged{DType::F32, ws, weights.data.size(), wv.size() * sizeof(float)};
    weights.data.append(reinterpret_cast<const char *>(wv.data()), merged.bytes);
    w->second = merged;
    weights.tensors.erase(a);
    weights.tensors.erase(b);
  }
  return (int)layers.size();
}

} // namespace ampc::rt
