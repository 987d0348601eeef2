// Starting a run from weights alone (`ampc train --init-from FILE`): model
// params are taken by name from a safetensors file, such as one PyTorch
// wrote or a checkpoint of another level or optimizer; optimizer and
// loss-scale state start fresh.
#ifndef AMPC_RUNTIME_DRIVER_WEIGHTS_H
#define AMPC_RUNTIME_DRIVER_WEIGHTS_H

#include <string>
#include <vector>

#include "runtime/driver/Checkpoint.h"

namespace ampc::rt {

/// How a weights file lays out Linear weights: as the graph's params, or
/// as PyTorch's Linear [out, in]; by default as its metadata says
/// ("format": "pt" is PyTorch's). HuggingFace: a GPT-2 or LLaMA checkpoint
/// from the Hub, in its own names, for the zoo's gpt2 and llama
/// (HuggingFaceNames.h).
enum class WeightLayout { FromFile, Graph, Torch, HuggingFace };

/// `checkpoint`'s weight averages as the weights: each tensor P with an
/// average `<P>.ema` (a run with --ema-decay) takes the average's values
/// (and P's master is dropped); the rest stay. Throws RuntimeError naming
/// the file when it has no average.
Safetensors averagedWeights(Safetensors checkpoint);

/// Loads every param named in `modelParams`, and the f32 master
/// (`<param>.master`) and weight average (`<param>.ema`) of each, from
/// `file`. A tensor may be of any float
/// dtype (values are rounded to the param's). Its shape must be the param's;
/// in PyTorch's layout, a param that the forward plan `layout` reads as the
/// right operand of a matmul without transpose_b ([in, out]: a builder's
/// Linear) is read as [out, in] and transposed; one read with transpose_b
/// (an ONNX import's) is read as it is. A missing or misshapen tensor is an
/// error naming it and what the file has; where every misshapen tensor is
/// the transpose of its param, the error names --init-layout torch.
void loadWeights(const Safetensors &file, Executor &ex,
                 const std::vector<std::string> &modelParams, const Plan &layout,
                 WeightLayout layoutOfFile = WeightLayout::FromFile);

} // namespace ampc::rt

#endif
