// A step's attributes decoded once, when a backend prepares the step, from
// the plan's JSON into typed values: kernels look them up by name without
// touching JSON on every run.
#ifndef AMPC_RUNTIME_CORE_STEPATTRS_H
#define AMPC_RUNTIME_CORE_STEPATTRS_H

#include <string>
#include <vector>

#include "runtime/core/Plan.h"

namespace ampc::rt {

/// Which micro-batches of an accumulation window a step runs on
/// (docs/training.md, "Gradient accumulation"): every one; only the
/// window's last (`apply`: the optimizer); only its first (`first`: state
/// backups). Without accumulation every step runs.
enum class Phase : uint8_t { Every, Apply, First };

/// A `scale` step folded into the step beside it (docs/runtime.md,
/// "Softmax scales"): v * scale + bias, rounded to `round` as the scale
/// step's result was. Absent: the identity.
struct FoldedScale {
  bool present = false;
  float scale = 1.0f, bias = 0.0f;
  DType round = DType::F32;
};

class StepAttrs {
public:
  StepAttrs() = default;
  /// Throws PlanError naming the step when `attrs` is not an object or an
  /// attribute is of no type a kernel reads.
  explicit StepAttrs(const Step &step);

  /// Whether the step has the attribute `name`.
  bool has(const char *name) const { return find(name) != nullptr; }
  /// The attribute `name`, or `dflt` when the step has none. A value of the
  /// wrong type throws PlanError naming the step and the attribute.
  bool getBool(const char *name, bool dflt) const;
  int64_t getInt(const char *name, int64_t dflt) const;
  double getF64(const char *name, double dflt) const;
  std::string getStr(const char *name, const std::string &dflt) const;
  std::vector<int64_t> getInts(const char *name, std::vector<int64_t> dflt = {}) const;
  /// A list of numbers as doubles (fractions kept), or {} when absent.
  std::vector<double> getReals(const char *name) const;
  /// A list of strings, or {} when absent.
  std::vector<std::string> getStrs(const char *name) const;
  /// The dtype input `i` is rounded to before use, or F32: the plan's
  /// `round_inputs` (one dtype name or "" per input) marks where lowering
  /// fused a cast of a param or input into this step.
  DType roundedInput(size_t i) const;
  /// The scale folded in at `prefix` ("input": into a softmax's operand,
  /// "output": into a softmax_backward's result), from the attributes
  /// PREFIX_scale, PREFIX_bias and PREFIX_round (a float dtype name or "").
  FoldedScale foldedScale(const std::string &prefix) const;
  /// The step's phase (attribute `phase`: absent, "apply" or "first").
  Phase phase() const { return phase_; }

private:
  enum class Kind { Bool, Number, String, Ints, Strings };
  struct Entry {
    std::string name;
    Kind kind;
    bool boolean = false;
    int64_t integer = 0;
    double real = 0;
    std::string text;
    std::vector<int64_t> ints;
    std::vector<double> reals;
    std::vector<std::string> strings;
  };
  const Entry *find(const char *name) const;
  [[noreturn]] void wrongType(const char *name, const char *wanted) const;
  std::string step_;
  std::vector<Entry> entries_;
  std::vector<DType> rounded_;
  Phase phase_ = Phase::Every;
};

} // namespace ampc::rt

#endif
