// Training checkpoints in the safetensors format: an 8-byte little-endian
// header size, a JSON header ({name: {dtype, shape, data_offsets}} and
// "__metadata__" with string values), then the raw tensors. They hold every
// param and piece of training state (optimizer moments, f32 masters, loss
// scale and its counters, step counts) and the driver's counters.
#ifndef AMPC_RUNTIME_CHECKPOINT_H
#define AMPC_RUNTIME_CHECKPOINT_H

#include <map>
#include <string>

#include "runtime/Executor.h"

namespace ampc::rt {

/// Writes every param buffer (kind param) of the executor's plan and
/// `metadata`, atomically (temporary file, then rename). Throws RuntimeError.
void saveCheckpoint(const std::string &path, const Executor &ex,
                    const std::map<std::string, std::string> &metadata);

/// Loads a checkpoint into the executor's params; every param of the plan
/// must be there with its dtype and shape. Returns the metadata. Throws
/// RuntimeError naming the problem (unreadable, truncated, missing tensor...).
std::map<std::string, std::string> loadCheckpoint(const std::string &path, Executor &ex);

} // namespace ampc::rt

#endif
