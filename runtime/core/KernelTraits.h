// Kernel contracts as data: one row per plan kernel, read by the lowering
// (fused casts), the memory planner (aliasing, in-place reuse, in-order
// lists), the executor (arity checks), the data feed (integer ranges), the
// precision report (FLOPs), the profile (AMP bookkeeping) and the backend
// check (how closely a device must agree with the CPU). Every backend
// implements exactly these kernels; a test checks that each has a row.
#ifndef AMPC_RUNTIME_CORE_KERNELTRAITS_H
#define AMPC_RUNTIME_CORE_KERNELTRAITS_H

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/core/Kernel.h"
#include "runtime/core/KernelSignatures.h"

namespace ampc::rt {

enum KernelFlag : unsigned {
  /// Output 0 is input 0's bytes unchanged (reshape, flatten, identity): the
  /// planner gives both one storage.
  kAliasesInput = 1u << 0,
  /// Reads each element (or a row's elements) before writing the same ones:
  /// the output may take the storage of a same-sized input that dies here.
  kInPlace = 1u << 1,
  /// Reads list input k before writing output k (check_finite_and_unscale),
  /// so output k may reuse inputs already consumed, where the target allows.
  kInOrderList = 1u << 2,
  /// As many outputs as inputs (a list in, a list out; the last input is a
  /// scalar and the last output a flag).
  kOutputPerInput = 1u << 3,
  /// Casts, finite checks and the scale update: AMP's overhead in a profile.
  kAmpBookkeeping = 1u << 4,
  /// Reads the plan's run counter as its last input (dropout's streams);
  /// with a `randomRate` attribute, only where that rate is nonzero.
  kReadsIteration = 1u << 5,
  /// Its last output is found_inf: any inf or nan in its inputs.
  kFlagsNonFinite = 1u << 6,
  /// Its output is its input in another dtype (cast).
  kConvertsDtype = 1u << 7,
  /// A bucket of a collective (all_reduce): output k takes input k's storage
  /// where input k dies there, and the planner lays the outputs out one
  /// after another, so one call moves the whole bucket.
  kPacksList = 1u << 8,
  /// An optimizer update (sgd, momentum, adam): writes its first operand from
  /// a gradient, and with `writes_copy` its low-precision copy too.
  kOptimizerUpdate = 1u << 9,
  /// Reads each float operand at its own dtype and writes each float result
  /// at its own, computing in f32 and rounding each result once: a widening
  /// cast before it or a narrowing one after it can run inside it with the
  /// same bits (compiler/plan/CastsIntoKernels.cpp).
  kMixedFloat = 1u << 10,
  /// May have one output more than its arity: a copy of result 0 (f32)
  /// rounded to that output's dtype (f16/bf16), written in the same pass. A
  /// narrowing cast of a result that other steps also read folds into it
  /// (compiler/plan/CastsIntoKernels.cpp).
  kRoundedCopy = 1u << 11,
  /// Its results are elements of its inputs, unchanged, or zeros (data
  /// movement): nothing is computed, so nothing is rounded, and it reads
  /// and writes one dtype. A range probe reads its result as it is
  /// (compiler/plan/NumericsProbes.cpp).
  kMovesValues = 1u << 12,
  /// Its second result may be a relu mask of result 0 (matmul_bias with
  /// GemmEpilogue::reluMask, runtime/core/StepVariants.h): bits, which the
  /// backend check compares at the relu's edge, not as values.
  kMayKeepReluMask = 1u << 13,
};

/// How a precision report counts the FLOPs of a node.
enum class FlopRule : uint8_t {
  None,          // data movement, casts, lookups, constants
  PerOutput,     // one per element of result 0 (elementwise, backward, updates)
  PerInput,      // one per element of operand 0 (reductions, pooling, mse)
  FivePerInput,  // about five per element of operand 0 (softmax, norms, cross entropy)
  Matmul,        // 2·M·N·K
  Conv,          // 2 · output elements · filter elements per output channel
  ConvBackwardInput,  // the forward's: 2 · dy's elements · filter elements per output channel
  ConvBackwardFilter, // the forward's: 2 · dy's elements · dfilter elements per output channel
  Attention,     // 2 · batch · heads · seq_q · seq_k · (head_dim + head_dim_v)
  AttentionBackward, // 2 · batch · heads · seq_q · seq_k · (3 head_dim + 2 head_dim_v)
};

/// How closely another backend's results must match the CPU's (the
/// reference), checked by ampc-backend-check (docs/runtime.md).
enum class Agreement : uint8_t {
  Exact,       // the same bits: each element computed as the CPU computes it
  Rounded,     // within a few ulps per element: the device's exp, log, tanh, erf, pow
  Accumulated, // within a tolerance scaled by the tensor: sums in another order (GEMM, conv)
  /// Accumulated, and in f16/bf16 twice as wide: a fused attention on
  /// tensor cores rounds each probability and score gradient to the
  /// operands' dtype before its products, where the CPU keeps them in f32.
  Attention,
};

struct Arity {
  int min, max; // max < 0: any number
  bool allows(size_t n) const { return (int)n >= min && (max < 0 || (int)n <= max); }
};

/// An integer input that indexes a dimension of another operand: synthetic
/// data draws it from [0, that dimension).
struct IntRange {
  int input = -1;        // -1: none
  int bound = 0;         // the operand whose dimension bounds it
  bool boundIsOutput = false;
  int dim = 0;           // negative from the end
};

/// One operand of a step: input or result `index`; index -1: none.
struct OperandRef {
  int index = -1;
  bool output = false;
};

struct KernelTraits {
  Kernel kernel;
  Arity inputs, outputs;
  unsigned flags;
  /// Bit i: the kernel widens input i to f32 before use, so it can read an
  /// f32 value rounded instead of an f16/bf16 copy (`round_inputs`).
  unsigned widenedInputs;
  FlopRule flops;
  IntRange intRange;
  /// What the step's buffers and attributes must be (KernelSignatures.h).
  SignatureCheck check;
  Agreement agreement = Agreement::Exact;
  /// Result 1 is a bias gradient: the column sums of this operand. A bias
  /// that cannot change the loss (attention's key bias: softmax ignores a
  /// shift) has a gradient of sums that cancel to rounding noise, which two
  /// orders of summation leave at different noise: the backend check holds
  /// it to the scale of the terms, not of that noise.
  OperandRef biasGradTerms = {};
  /// kReadsIteration: the attribute whose nonzero value makes the step draw
  /// random bits (attention's `dropout`); null: every step does.
  const char *randomRate = nullptr;
  const char *name() const { return kernelName(kernel); }
  bool has(KernelFlag f) const { return (flags & f) != 0; }
  bool widens(size_t input) const { return input < 32 && (widenedInputs >> input) & 1u; }
};

/// The row of `kernel`.
const KernelTraits &traitsOf(Kernel kernel);
/// The row of the kernel called `name` (a graph op's, a plan's), or null.
const KernelTraits *findKernelTraits(std::string_view name);
/// Every row, in table order.
const std::vector<KernelTraits> &allKernelTraits();

/// Whether `step` reads the plan's run counter (kReadsIteration): its
/// kernel does, at a nonzero rate where the kernel names one.
bool readsIteration(const Step &step);

/// Whether `step` carries a rounded copy of its
/// result 0, as its last output (kRoundedCopy).
inline bool hasRoundedCopy(const Step &step) {
  const KernelTraits &traits = traitsOf(step.kernel);
  return traits.has(kRoundedCopy) && traits.outputs.max >= 0 &&
         step.outputs.size() == (size_t)traits.outputs.max + 1;
}

/// Throws PlanError unless `step` keeps its kernel's contract: the arity
/// and signature its traits ask for, a well-formed rounded copy, and inputs
/// overlapped only where the kernel may. Run when a plan is lowered and
/// again when an executor takes it (a plan may come from a file).
void checkStepContract(const Plan &plan, const Step &step);

/// The attributes a FLOP rule reads: matmul's `transpose_a`, attention's
/// `causal` (only the pairs the mask keeps count, as FlashAttention counts).
struct FlopAttrs {
  bool transposeA = false, causal = false;
};

/// FLOPs of one node or step under its rule, from its operand and result
/// shapes and `attrs`.
double kernelFlops(const KernelTraits &traits, const std::vector<std::vector<int64_t>> &inputs,
                   const std::vector<std::vector<int64_t>> &outputs, FlopAttrs attrs);

} // namespace ampc::rt

#endif
