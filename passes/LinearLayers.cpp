#include "passes/LinearLayers.h"

#include "ops/GraphNames.h"

using namespace mlir;

namespace ampc::train {
namespace {

bool isAdapter(StringRef name) { return name.ends_with(".lora_a") || name.ends_with(".lora_b"); }

/// The weight param a matmul reads as a linear layer's, and whether it is
/// stored [out, in]; null when it reads none.
graph::ParamOp weightOf(graph::MatmulOp mm, bool &outIn) {
  Value b = mm.getB();
  outIn = mm.getTransposeB();
  if (auto t = b.getDefiningOp<graph::TransposeOp>()) {
    if (t.getPerm() != ArrayRef<int64_t>{1, 0} || !t.getY().hasOneUse())
      return nullptr;
    b = t.getX();
    outIn = !outIn;
  }
  auto p = b.getDefiningOp<graph::ParamOp>();
  if (!p || !b.hasOneUse() || mm.getTransposeA() || !graph::isFloatTensor(p.getType()) ||
      cast<RankedTensorType>(p.getType()).getRank() != 2 || isAdapter(p.getName()))
    return nullptr;
  return p;
}

} // namespace

std::vector<LinearLayer> linearLayers(graph::GraphOp g) {
  std::vector<LinearLayer> layers;
  g.walk([&](graph::MatmulOp mm) {
    bool outIn = false;
    graph::ParamOp w = weightOf(mm, outIn);
    if (!w)
      return;
    ArrayRef<int64_t> shape = cast<RankedTensorType>(w.getType()).getShape();
    StringRef layer = w.getName();
    if (!layer.consume_back(".weight"))
      (void)layer.consume_back(".w");
    layers.push_back({mm, w, layer.str(), shape[outIn ? 1 : 0], shape[outIn ? 0 : 1], outIn});
  });
  return layers;
}

} // namespace ampc::train
