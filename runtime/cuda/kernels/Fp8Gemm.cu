// fp8_matmul through cuBLASLt (docs/cuda.md, "FP8"). cuBLASLt's FP8 GEMMs
// (sm_89 and newer) take the TN layout only: column-major D = Aᵀ·B. Our
// row-major y = a · bᵀ, a [M, K] and b [N, K], is column-major yᵀ = b·aᵀ:
// Lt's A is our b ([N, K] row-major is K×N column-major, read transposed)
// and Lt's B our a (K×M column-major, read as it is). The dequantizing
// scales are the scale inverses, through Lt's A and B scale pointers: D =
// (b_scale_inv · b)(a_scale_inv · a), accumulated in f32 and rounded once
// to y's dtype (C and D of one dtype, bf16 by graph-fp8). a's batch
// dimensions fold into its rows (b is 2-D). Descriptors and the heuristic's
// algorithm are made at the step's first run.
#include <string>

#include "runtime/cuda/kernels/Fp8Gemm.h"

namespace ampc::rt::cuda {
namespace {

constexpr size_t kWorkspace = 32u << 20;

void check(LaunchContext &c, cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    c.fail(std::string("cuBLASLt FP8 ") + what + " failed (status " +
           std::to_string((int)status) + ")");
}

cudaDataType_t ltType(DType t) {
  switch (t) {
  case DType::F8E4M3: return CUDA_R_8F_E4M3;
  case DType::F8E5M2: return CUDA_R_8F_E5M2;
  case DType::BF16: return CUDA_R_16BF;
  case DType::F16: return CUDA_R_16F;
  default: return CUDA_R_32F;
  }
}

struct LtFp8 {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
  cublasLtMatmulAlgo_t algo;
  ~LtFp8() {
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(d);
    cublasLtMatmulDescDestroy(desc);
  }
};

bool loopOnly() {
  static const bool loop = envIs("AMPC_CUDA_FP8_LOOP", "1");
  return loop;
}

/// The step's descriptors, or null where cuBLASLt has no algorithm.
std::shared_ptr<LtFp8> describe(LaunchContext &c, int64_t m, int64_t n, int64_t k) {
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  auto g = std::make_shared<LtFp8>();
  check(c, cublasLtMatmulDescCreate(&g->desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor");
  cublasOperation_t opA = CUBLAS_OP_T, opB = CUBLAS_OP_N;
  check(c, cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
        "transpose");
  check(c, cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
        "transpose");
  const void *scaleA = c.in[3].data, *scaleB = c.in[2].data; // Lt's A is our b
  check(c, cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &scaleA,
                                          sizeof scaleA), "A scale");
  check(c, cublasLtMatmulDescSetAttribute(g->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &scaleB,
                                          sizeof scaleB), "B scale");
  check(c, cublasLtMatrixLayoutCreate(&g->a, ltType(b.dtype), k, n, k), "layout");
  check(c, cublasLtMatrixLayoutCreate(&g->b, ltType(a.dtype), k, m, k), "layout");
  check(c, cublasLtMatrixLayoutCreate(&g->d, ltType(y.dtype), n, m, n), "layout");
  cublasLtMatmulPreference_t pref;
  check(c, cublasLtMatmulPreferenceCreate(&pref), "preference");
  size_t workspace = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof workspace);
  cublasLtMatmulHeuristicResult_t result;
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      c.device.blasLt(), g->desc, g->a, g->b, g->d, g->d, pref, 1, &result, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0 || result.state != CUBLAS_STATUS_SUCCESS)
    return nullptr;
  g->algo = result.algo;
  return g;
}

} // namespace

bool fp8GemmLt(LaunchContext &c) {
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  if (loopOnly() || c.attrs.getBool("transpose_a", false) ||
      !c.attrs.getBool("transpose_b", false) || b.rank() != 2)
    return false;
  int64_t n = y.dim(-1), k = a.dim(-1), m = y.size() / n;
  if (m % 16 || n % 16 || k % 16 || (a.dtype == DType::F8E5M2 && b.dtype == DType::F8E5M2))
    return false;
  if (!c.cache) { // no algorithm: an empty entry, and the loop from now on
    std::shared_ptr<LtFp8> g = describe(c, m, n, k);
    c.cache = g ? g : std::make_shared<LtFp8>();
  }
  LtFp8 &g = *std::static_pointer_cast<LtFp8>(c.cache);
  if (!g.desc)
    return false;
  float one = 1.0f, zero = 0.0f;
  check(c, cublasLtMatmul(c.device.blasLt(), g.desc, &one, b.data, g.a, a.data, g.b, &zero,
                          y.data, g.d, y.data, g.d, &g.algo, c.device.scratch(kWorkspace),
                          kWorkspace, c.stream()),
        "matmul");
  return true;
}

} // namespace ampc::rt::cuda
