// What a plan is lowered for. The memory planner and the lowering read it;
// an executor runs a plan only on a backend of the same target, since a plan's
// offsets, fused casts and buffer reuse were chosen for that target's kernels.
#ifndef AMPC_RUNTIME_CORE_TARGET_H
#define AMPC_RUNTIME_CORE_TARGET_H

#include <cstdint>
#include <string>

namespace ampc::rt {

struct Target {
  /// The backend that runs it: "cpu" or "cuda".
  std::string name;
  /// Every buffer offset is a multiple of this many bytes.
  int64_t alignment = 64;
  /// Casts of f32 params and inputs to f16/bf16 are fused into readers that
  /// widen their operands anyway (steps carry `round_inputs`).
  bool fusedCasts = true;
  /// List kernels (check_finite_and_unscale) may consume input k before
  /// writing output k, so the planner lets output k reuse earlier inputs'
  /// memory. A backend that reads the whole list at once declines this.
  bool inOrderLists = true;
  /// A matmul whose result only a bias add reads (and then only a relu or a
  /// tanh GELU) runs as one `matmul_bias` step: the GEMM's epilogue adds the
  /// bias to the f32 accumulator and rounds once (cuBLASLt's BIAS epilogues).
  /// In the backward, activation and bias gradients join their GEMMs
  /// (`matmul_act_grad`, `matmul_bias_grad`; compiler/plan/GradEpilogues.cpp).
  bool gemmEpilogues = false;
  /// A chain of elementwise ops whose intermediate values nothing else reads
  /// runs as one `elementwise_chain` step (compiler/plan/ElementwiseChains.cpp).
  bool elementwiseChains = false;
  /// The largest head_dim its attention kernel takes (0: any); a plan with
  /// a larger one is refused when it is compiled, not when it runs.
  int64_t maxAttentionHeadDim = 0;
  /// Its FP8 GEMMs take one layout, y = a · bᵀ (cuBLASLt's TN): an
  /// fp8_matmul reads transposed copies of the operands in another
  /// (compiler/plan/Fp8Layouts.cpp).
  bool fp8GemmsTN = false;

  bool operator==(const Target &o) const {
    return name == o.name && alignment == o.alignment && fusedCasts == o.fusedCasts &&
           inOrderLists == o.inOrderLists && gemmEpilogues == o.gemmEpilogues &&
           elementwiseChains == o.elementwiseChains &&
           maxAttentionHeadDim == o.maxAttentionHeadDim && fp8GemmsTN == o.fp8GemmsTN;
  }
  bool operator!=(const Target &o) const { return !(*this == o); }
};

/// The CPU backend's target: 64-byte alignment (a cache line, AVX loads),
/// fused casts, in-order lists.
const Target &cpuTarget();
/// The CUDA backend's target: 256-byte alignment (cuBLASLt and vectorised
/// loads), no fused casts (cuBLASLt reads f16 operands as they are), and a
/// finite check that reads the whole gradient list in one launch, GEMM
/// epilogues and elementwise chains; attention of head_dim up to 256; FP8
/// GEMMs in the TN layout.
const Target &cudaTarget();
/// The target called `name`, or null.
const Target *findTarget(const std::string &name);

} // namespace ampc::rt

#endif
