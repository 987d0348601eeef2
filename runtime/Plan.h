// The execution plan: buffers (dtype, shape, offset in one arena or in the
// persistent region) and steps (kernel, attributes, input and output
// buffers) in topological order. Written by `ampc compile` as JSON
// (format "ampc.plan", version 1) and executed by runtime/Executor without MLIR.
#ifndef AMPC_RUNTIME_PLAN_H
#define AMPC_RUNTIME_PLAN_H

#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/DType.h"

namespace ampc::rt {

using Json = nlohmann::ordered_json;

/// A bad plan file or a plan that does not hold together.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Inputs and temporaries live in the arena; params and consts are
/// persistent state, kept apart.
enum class BufferKind { Input, Param, Const, Temp };

const char *kindName(BufferKind k);

struct Buffer {
  int id = 0;
  std::string name;
  BufferKind kind = BufferKind::Temp;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  int64_t offset = 0, bytes = 0;
  Json init;                    // params: the init spec
  bool trainable = true;        // params
  std::string masterDtype;      // params stored in low precision (AMP O2)
  std::vector<double> data;     // consts
  bool isPersistent() const { return kind == BufferKind::Param || kind == BufferKind::Const; }
};

struct Step {
  std::string name, kernel;
  std::vector<int> inputs, outputs;
  Json attrs = Json::object();
};

struct Plan {
  std::string name;
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<int> inputs, outputs;
  int loss = -1;
  int64_t arenaBytes = 0, persistentBytes = 0;
  /// The arena's size with no reuse: every input and temporary apart.
  int64_t unsharedBytes = 0;
  /// The most arena bytes live at once, a lower bound of arenaBytes (set by
  /// planMemory; not saved in the plan file).
  int64_t liveBytes = 0;
  int64_t peakBytes() const { return arenaBytes + persistentBytes; }
  /// The buffer called `name`, or -1.
  int find(const std::string &name) const;
};

/// Plan <-> JSON text. planFromJson validates ids, sizes and offsets.
std::string planToJson(const Plan &plan);
Plan planFromJson(const std::string &text);
Plan loadPlan(const std::string &path);

/// Assigns offsets: persistent buffers one after another; inputs and
/// temporaries in one arena, reusing memory by liveness. reshape, flatten and
/// identity outputs alias their input; an elementwise step writes in place
/// into an input that dies there. Sets arenaBytes, persistentBytes and
/// unsharedBytes.
void planMemory(Plan &plan);

/// Alignment of every buffer, in bytes.
constexpr int64_t kAlignment = 64;

} // namespace ampc::rt

#endif
