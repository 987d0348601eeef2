// The execution plan: the target it was lowered for, buffers (dtype, shape,
// offset in one arena or in the persistent region) and steps (kernel,
// attributes, input and output buffers) in execution order. Written by
// `ampc compile` as JSON (format "ampc.plan", version 2; docs/runtime.md) and
// run by runtime/device/Executor without MLIR.
#ifndef AMPC_RUNTIME_CORE_PLAN_H
#define AMPC_RUNTIME_CORE_PLAN_H

#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/DType.h"
#include "runtime/core/Errors.h"
#include "runtime/core/JsonText.h"
#include "runtime/core/Kernel.h"
#include "runtime/core/Target.h"

namespace ampc::rt {

/// Inputs and temporaries live in the arena; params, consts and the run's
/// counters (state) are persistent, kept apart.
enum class BufferKind { Input, Param, Const, Temp, State };

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
  /// A param that is the low-precision copy of param `copyOf` (an O1 weight
  /// cast kept by the optimizer update): the executor rewrites it whenever
  /// that param is written; checkpoints leave it out. -1: none.
  int copyOf = -1;
  std::vector<double> data;     // consts, and params whose init kind is "data"
  bool isPersistent() const {
    return kind == BufferKind::Param || kind == BufferKind::Const || kind == BufferKind::State;
  }
};

struct Step {
  std::string name;
  Kernel kernel = Kernel::Identity;
  std::vector<int> inputs, outputs;
  Json attrs = Json::object();
};

struct Plan {
  std::string name;
  Target target = cpuTarget();
  std::vector<Buffer> buffers;
  std::vector<Step> steps;
  std::vector<int> inputs, outputs;
  int loss = -1;
  /// State buffers (i64 scalars, zero at the start) that the plan's steps
  /// advance: the run counter that keys dropout's streams, and the count of
  /// skipped (non-finite) optimizer steps. -1 when the plan has none.
  int iteration = -1, skippedSteps = -1;
  int64_t arenaBytes = 0, persistentBytes = 0;
  /// The arena's size with no reuse: every input and temporary apart.
  int64_t unsharedBytes = 0;
  /// The most arena bytes live at once, a lower bound of arenaBytes (set by
  /// planMemory; not saved in the plan file).
  int64_t liveBytes = 0;
  int64_t peakBytes() const { return arenaBytes + persistentBytes; }
  /// The buffer called `name`, or -1.
  int find(const std::string &name) const;
  /// Appends a buffer numbered next, its bytes those of `shape` in `dtype`;
  /// returns its id.
  int addBuffer(const std::string &name, BufferKind kind, DType dtype, std::vector<int64_t> shape);
};

/// The input a training plan's caller writes once per run besides the
/// (peak) learning rate `lr`: a learning-rate schedule's length in steps.
constexpr const char *kLrTotalSteps = "lr_total_steps";

/// The state a training plan keeps of a param P, named after it, that
/// starts from P's initial values: P's f32 master (AMP O2) and P's moving
/// average (docs/training.md, "Weight averaging (EMA)").
constexpr const char *kMasterSuffix = ".master";
constexpr const char *kAverageSuffix = ".ema";
/// P where `name` is `<P><suffix>` (a master's or an average's param),
/// else "".
std::string stateOwner(const std::string &name, std::string_view suffix);
/// The param whose initial values buffer `name` starts from: P for P's
/// master or average, else `name` itself.
std::string initialValuesOwner(const Plan &plan, const std::string &name);

/// Whether buffers a and b share bytes: the same region, overlapping ranges.
bool buffersOverlap(const Plan &plan, int a, int b);

/// The ranks the plan's `all_reduce` steps sum over (1 without any).
int64_t planWorldSize(const Plan &plan);
/// The bytes the plan's `all_reduce` steps move per optimizer step, on each
/// rank: the sizes of their tensors.
int64_t allreduceBytes(const Plan &plan);

/// The plan format version this runtime reads and writes.
constexpr int kPlanVersion = 2;

/// Plan <-> JSON text. planFromJson validates every field's type and range,
/// ids, sizes (overflow-checked) and offsets; throws PlanError naming the
/// buffer, step or field.
std::string planToJson(const Plan &plan);
Plan planFromJson(const std::string &text);
Plan loadPlan(const std::string &path);

} // namespace ampc::rt

#endif
