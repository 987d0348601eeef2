// A graph's linear layers, for LoRA (passes/LoraPass.cpp) and for merging
// its adapters back into the weights (docs/training.md, "LoRA on any graph").
#ifndef AMPC_PASSES_LINEARLAYERS_H
#define AMPC_PASSES_LINEARLAYERS_H

#include <string>
#include <vector>

#include "ops/GraphOps.h"

namespace ampc::train {

/// A matmul by a 2-D float param that nothing else reads (an adapter's own
/// excepted), as it is ([in, out]) or through a [1, 0] transpose ([out, in]:
/// PyTorch's Linear weight, as the ONNX importer writes it).
struct LinearLayer {
  graph::MatmulOp matmul;
  graph::ParamOp weight;
  /// The weight's name less a last `.weight` or `.w`: `fc` for `fc.weight`.
  std::string layer;
  int64_t in = 0, out = 0;
  /// The weight is stored [out, in].
  bool outIn = false;
};

/// The graph's linear layers, in order.
std::vector<LinearLayer> linearLayers(graph::GraphOp g);

} // namespace ampc::train

#endif
