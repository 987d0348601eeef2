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

/// Loads every param named in `modelParams`, and the f32 master
/// (`<param>.master`) of each, from `file`. A tensor may be of any float
/// dtype (values are rounded to the param's). Its shape must be the param's;
/// in a file PyTorch wrote (metadata "format": "pt"), the right operand of a
/// matmul is read in PyTorch's Linear layout [out, in] and transposed. A
/// missing or misshapen tensor is an error naming it and what the file has.
void loadWeights(const Safetensors &file, Executor &ex,
                 const std::vector<std::string> &modelParams);

} // namespace ampc::rt

#endif
