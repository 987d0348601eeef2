// Compares a backend with the CPU (the reference) on one plan, the way a
// kernel test would but on a real model's data:
//  - step by step: before each step the candidate receives the reference's
//    values of the step's inputs, so an error never travels to later steps;
//    then both run the step alone, and every buffer the step touches (its
//    outputs and the operands it writes) is compared under its kernel's
//    Agreement (runtime/core/KernelTraits.h);
//  - whole runs: a few runs of the plan on each backend, the candidate step
//    by step, with queued launches, with graph replay, and with graph replay
//    again, whose losses, params and outputs must be bit-identical (grouped
//    launches and replay change nothing, runs are deterministic), and whose
//    losses stay close to the reference's.
// Used by ampc-backend-check (docs/runtime.md, "Checking a backend").
#ifndef AMPC_RUNTIME_DRIVER_BACKENDCHECK_H
#define AMPC_RUNTIME_DRIVER_BACKENDCHECK_H

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/core/KernelTraits.h"
#include "runtime/core/Plan.h"

namespace ampc::rt {

/// A plan the check cannot feed (its data spec does not fit the plan's
/// inputs, such as a batch of 0 samples): skipped, not failed.
struct Uncheckable : RuntimeError {
  using RuntimeError::RuntimeError;
};

/// An element agrees when |got - ref| <= rtol·|ref| + atol·max|ref|, the
/// maximum over the buffer; Exact means the same bits (any NaN equals any
/// NaN), as does every integer and bool buffer.
struct Tolerance {
  double rtol = 0, atol = 0;
};
Tolerance toleranceFor(Agreement agreement, DType dtype);
const char *agreementName(Agreement agreement);

struct BufferDiff {
  int64_t elements = 0;
  int64_t differing = 0; // elements whose bits differ (NaNs aside)
  int64_t outside = 0;   // elements beyond the tolerance
  double refMaxAbs = 0, maxAbsDiff = 0;
  /// The largest |got - ref| as a fraction of its allowance (> 1: outside).
  double worstShare = 0;
  int64_t worstIndex = -1;
  double worstRef = 0, worstGot = 0;
  bool ok() const { return outside == 0; }
};

/// Compares two copies of one buffer (`ref` and `got`, equal sizes, in
/// `dtype`) under `agreement`; a sum's absolute tolerance scales with the
/// larger of the reference's values and `termScale`, the magnitude of the
/// terms it sums where they may cancel. With `overflowedInputs` (the step
/// read an inf or NaN), a sum (Accumulated, Attention) agrees wherever
/// either side is not finite: whether 0 · inf comes out NaN or 0 is the
/// library's (cuBLASLt's relu gradient may select where the CPU
/// multiplies; a convolution may skip its padding), and whether such a step
/// is skipped is held by the whole runs.
BufferDiff compareBuffer(const std::vector<std::byte> &ref, const std::vector<std::byte> &got,
                         DType dtype, Agreement agreement, double termScale = 0,
                         bool overflowedInputs = false);

/// Compares two copies of a relu mask (runtime/core/ReluMask.h) bit by bit,
/// given the two results `refY` and `gotY` (in `dtype`) it marks: a bit may
/// differ only where one side's result is zero, a sum at the relu's edge.
BufferDiff compareReluMask(const std::vector<std::byte> &ref, const std::vector<std::byte> &got,
                           const std::vector<std::byte> &refY, const std::vector<std::byte> &gotY,
                           DType dtype);

struct CheckOptions {
  std::string reference = "cpu", candidate = "cuda";
  /// `synthetic` or `fashion-mnist[:DIR]` (runtime/driver/Data.h).
  std::string data = "synthetic";
  uint64_t seed = 0;
  double lr = 0.01;  // training plans' lr input
  /// Whole runs per backend, in accumulation windows of two: the first
  /// run of a window runs `first` steps, the second `apply` steps.
  int64_t runs = 4;
  /// The run (0-based) whose first float input gets an inf in element 0,
  /// on every backend: the step must be skipped and the scale cut alike;
  /// -1: none.
  int64_t injectInfAt = -1;
  /// The candidate times its libraries' algorithms (docs/cuda.md, "GEMM
  /// tuning"): the tuned choices must agree with the reference too.
  bool tuneGemms = false;
  /// Whole runs check the gradients beside the backward (ExecOptions); off,
  /// in the check's place.
  bool overlapChecks = true;
};

struct StepCheck {
  size_t index = 0;
  std::string step;
  Kernel kernel = Kernel::Identity;
  Agreement agreement = Agreement::Exact;
  /// Each buffer the step touches, by name, with its comparison.
  std::vector<std::pair<std::string, BufferDiff>> buffers;
  /// The errors the step raised (such as an id out of range of the data),
  /// or "": both backends must raise one or neither, and the check stops.
  std::string referenceError, candidateError;
  /// The step read an inf or NaN: its sums' non-finite elements were left
  /// to the library (compareBuffer's overflowedInputs).
  bool overflowed = false;
  bool ok() const;
  bool exact() const;
};

/// Every step of `plan` on both backends, each from the reference's inputs,
/// up to the first that raises an error on either. Throws PlanError or
/// RuntimeError (the plan, the data, a backend that cannot run it).
std::vector<StepCheck> checkSteps(const Plan &plan, const CheckOptions &options);

/// The relative loss difference a whole run may show: errors compound
/// through the network and the steps, so this is a sanity bound; the step
/// check is the precise one. A plan that amplifies rounding (ResNet-18 at
/// batch 4 and 32 x 32 normalises 4 values a channel in its last stage)
/// can move further than that from rounding alone: its reference run again
/// from params one ulp away measures by how much, and the candidate may
/// differ by kSpreadFactor times that (docs/runtime.md, "Checking a backend").
constexpr double kRunLossTolerance = 1e-2;
constexpr double kSpreadFactor = 4;
double runLossAllowance(double referenceSpread);

struct RunCheck {
  /// The loss after each run (empty without a loss): reference, candidate
  /// queued, candidate replayed, candidate replayed again (and, not kept,
  /// candidate step by step).
  std::vector<double> reference, queued, replayed, again;
  /// Steps run one by one == the program (whose backend may group launches,
  /// such as CUDA's multi-tensor updates), bit for bit.
  bool stepwiseMatches = false;
  /// queued == replayed: losses, params, state and outputs, bit for bit.
  bool replayMatches = false;
  bool deterministic = false; // replayed == again, bit for bit
  /// The loss scale, its counters, the skipped-step count and the run
  /// counter equal the reference's bit for bit (exact arithmetic on both).
  bool bookkeepingMatches = false;
  /// The reference's bookkeeping is the same from params one ulp away. Where
  /// it is not, a step's largest gradient sits on the edge of overflow, where
  /// rounding decides the skip: the candidate's may differ too.
  bool bookkeepingSteady = true;
  int64_t nudgedSkipped = 0; // the reference's skipped steps from params one ulp away
  /// The loss scale and skipped steps after the runs: reference, candidate.
  double referenceScale = 0, candidateScale = 0;
  int64_t referenceSkipped = 0, candidateSkipped = 0;
  double maxLossRelDiff = 0;  // candidate (replayed) against the reference
  /// How far the reference's own losses move when every param starts one
  /// ulp away (the largest relative difference).
  double referenceSpread = 0;
  /// The difference the candidate's losses may show: runLossAllowance of
  /// the spread.
  double lossAllowance() const { return runLossAllowance(referenceSpread); }
  bool ok() const;
};


RunCheck checkRuns(const Plan &plan, const CheckOptions &options);

/// Whether the plan is a training plan (it has an `lr` input).
bool isTrainingPlan(const Plan &plan);
/// `plan` under the name of `backend`'s target, its layout kept: the CPU
/// runs a CUDA plan's steps as they are (its kernels need neither fused
/// casts nor in-order lists, and 256-byte offsets keep its alignment).
Plan renamedTarget(const Plan &plan, const std::string &backend);

} // namespace ampc::rt

#endif
