// Training checkpoints in the safetensors format: an 8-byte little-endian
// header size, a JSON header ({name: {dtype, shape, data_offsets}} and
// "__metadata__" with string values), then the raw tensors. They hold every
// param and piece of training state (optimizer moments, f32 masters, loss
// scale and its counters, step counts); the driver's counters and the plan's
// run counter and skipped-step count travel in the metadata.
#ifndef AMPC_RUNTIME_DRIVER_CHECKPOINT_H
#define AMPC_RUNTIME_DRIVER_CHECKPOINT_H

#include <map>
#include <string>

#include "runtime/device/Executor.h"

namespace ampc::rt {

/// A safetensors file, read whole and checked: every entry of its header
/// has a known dtype, a shape and byte range that agree and lie in the file.
struct Safetensors {
  struct Tensor {
    DType dtype;
    std::vector<int64_t> shape;
    size_t offset, bytes; // into `data`
  };
  std::string path;
  std::map<std::string, std::string> metadata;
  std::map<std::string, Tensor> tensors;
  std::string data; // the tensors' bytes
};

/// Reads and checks a safetensors file. Throws RuntimeError naming the file,
/// as `what` where it cannot be read ("checkpoint", "data file", ...), and
/// the problem (unreadable, truncated, a malformed header).
Safetensors readSafetensors(const std::string &path, const std::string &what = "checkpoint");
/// The same from the file's bytes (`path` names it in errors).
Safetensors parseSafetensors(std::string bytes, const std::string &path);

/// The values of `file`'s tensor `t`, a float or FP8 one, as f32.
std::vector<float> valuesAsF32(const Safetensors &file, const Safetensors::Tensor &t);

/// Writes `file`'s tensors (float ones) converted to `dtype` (rounded to
/// nearest even), with `metadata`, atomically; `what` names the file in
/// errors. Throws RuntimeError.
void writeSafetensors(const std::string &path, const Safetensors &file, DType dtype,
                      const std::map<std::string, std::string> &metadata,
                      const std::string &what);

/// Writes every param buffer (kind param) of the executor's plan and
/// `metadata`, atomically (docs/cli.md, "Errors"). Throws RuntimeError.
void saveCheckpoint(const std::string &path, const Executor &ex,
                    const std::map<std::string, std::string> &metadata);

/// Writes the buffers `ids` of the executor's plan, by name, atomically;
/// `what` names the file in errors. Throws RuntimeError.
void saveBuffers(const std::string &path, const Executor &ex, const std::vector<int> &ids,
                 const std::map<std::string, std::string> &metadata, const std::string &what);

/// Feeds every input of the executor's plan from the tensor of its name in
/// `file` (any float dtype for a float input, rounded to the input's; any
/// integer dtype for an integer one). A missing or misshapen tensor, or one
/// that names no input, is an error naming it. Throws RuntimeError.
void loadInputs(const Safetensors &file, Executor &ex);

/// Loads every param of the executor's plan from `file`, each by name with
/// its dtype and shape; throws RuntimeError naming a missing or different
/// tensor, with both shapes.
void loadParams(const Safetensors &file, Executor &ex);

} // namespace ampc::rt

#endif
