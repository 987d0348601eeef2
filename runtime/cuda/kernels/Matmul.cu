// matmul through cuBLASLt: f16/bf16 operands with f32 accumulation, f32 as
// true f32 (CUBLAS_COMPUTE_32F, no TF32: O0 means f32). Row-major C = A·B is
// column-major Cᵀ = Bᵀ·Aᵀ, so cuBLASLt's A is our B. Batches run as one
// strided-batched call (a missing batch broadcasts with stride 0), or one
// call per batch where batch dimensions broadcast unevenly. The descriptors
// and the algorithm are chosen at the step's first run: the fastest of
// cuBLASLt's heuristic candidates, timed on the step's operands, once per
// problem for the process (docs/cuda.md, "GEMM tuning"); the workspace is
// the device's scratch. The GEMM epilogues
// (docs/runtime.md) are cuBLASLt's: matmul_bias sets BIAS, RELU_BIAS or
// GELU_BIAS (the _AUX_ forms when it keeps the relu mask or the GELU input),
// matmul_act_grad DRELU_BGRAD or DGELU_BGRAD, matmul_bias_grad BGRADA (Lt's
// A is our b, summed over k). Where cuBLASLt has no algorithm for such an
// epilogue, the step runs a plain GEMM and finishes in kernels of its own.
#include <cstdio>
#include <mutex>

#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/Tuning.h"

namespace ampc::rt::cuda {
namespace {

constexpr size_t kWorkspace = 32u << 20;
constexpr int kCandidates = 8; // heuristic results timed at a step's first run

void checkLt(cublasStatus_t status, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(std::string("cuda: cuBLASLt ") + what + " failed (status " +
                       std::to_string((int)status) + ")");
}

cudaDataType_t cudaType(const LaunchContext &c, DType t) {
  switch (t) {
  case DType::F32: return CUDA_R_32F;
  case DType::F16: return CUDA_R_16F;
  case DType::BF16: return CUDA_R_16BF;
  default: c.fail(std::string("matmul of ") + dtypeName(t) + " is not supported on cuda");
  }
}

/// One cuBLASLt problem and its chosen algorithm.
struct Gemm {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulAlgo_t algo;
  ~Gemm() {
    cublasLtMatrixLayoutDestroy(a);
    cublasLtMatrixLayoutDestroy(b);
    cublasLtMatrixLayoutDestroy(c);
    cublasLtMatmulDescDestroy(desc);
  }
};

/// Everything a step's calls need: the problem, and per call the operand
/// offsets (bytes) when batches run one by one.
struct Plan {
  Gemm gemm;
  std::vector<std::array<int64_t, 3>> calls; // offsets of (our) A, B, C
  bool fallback = false; // a plain GEMM: the step's kernels finish the epilogue
  std::vector<cublasLtMatmulAlgo_t> candidates; // the heuristic's, best first
  std::string problem; // what decides the candidates: the tuning's key
};

/// The alignment (a power of two up to 256 bytes) of every address an
/// operand is read at: its buffer's (256) and each call's offset.
uint32_t alignmentOf(const std::vector<std::array<int64_t, 3>> &calls, int operand) {
  uint32_t align = 256;
  for (const auto &call : calls)
    while (align > 1 && call[operand] % align != 0)
      align /= 2;
  return align;
}

void layout(cublasLtMatrixLayout_t &l, cudaDataType_t type, int64_t rows, int64_t cols,
            int64_t ld, int64_t batch, int64_t stride) {
  checkLt(cublasLtMatrixLayoutCreate(&l, type, rows, cols, ld), "layout");
  if (batch > 1) {
    int32_t count = (int32_t)batch;
    checkLt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count,
                                             sizeof count), "batch count");
    checkLt(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                                             &stride, sizeof stride), "batch stride");
  }
}

/// Whether a step can finish its epilogue itself after a plain GEMM.
bool canFallBack(const LaunchContext &c) {
  return c.step.kernel != Kernel::Matmul && (c.step.kernel != Kernel::MatmulBias || c.out.size() == 2);
}

/// The step's cuBLASLt epilogue; with `fallback`, the one before the
/// step's own finishing kernels (MatmulFallback.cu).
cublasLtEpilogue_t epilogueOf(const LaunchContext &c, bool fallback) {
  Kernel kernel = c.step.kernel;
  if (fallback && kernel == Kernel::MatmulBias)
    return CUBLASLT_EPILOGUE_BIAS;
  if (fallback || kernel == Kernel::Matmul)
    return CUBLASLT_EPILOGUE_DEFAULT;
  if (kernel == Kernel::MatmulBiasGrad)
    return CUBLASLT_EPILOGUE_BGRADA;
  GemmEpilogue e = gemmEpilogueOf(c.step, c.attrs);
  if (kernel == Kernel::MatmulActGrad)
    return e.activation == Activation::Relu ? CUBLASLT_EPILOGUE_DRELU_BGRAD
                                            : CUBLASLT_EPILOGUE_DGELU_BGRAD;
  if (e.activation == Activation::None)
    return CUBLASLT_EPILOGUE_BIAS;
  if (e.activation == Activation::Relu)
    return e.keepsAux ? CUBLASLT_EPILOGUE_RELU_AUX_BIAS : CUBLASLT_EPILOGUE_RELU_BIAS;
  return e.keepsAux ? CUBLASLT_EPILOGUE_GELU_AUX_BIAS : CUBLASLT_EPILOGUE_GELU_BIAS;
}

/// Sets the epilogue and what it reads or writes beside the result: the
/// bias (matmul_bias) or the bias gradient (the _BGRAD forms), and the relu
/// mask or GELU input (ld: the result's columns, in bits for the mask).
void setEpilogue(LaunchContext &c, Gemm &g, cublasLtEpilogue_t epilogue) {
  if (epilogue == CUBLASLT_EPILOGUE_DEFAULT)
    return;
  const TensorRef &y = c.out[0];
  bool forward = c.step.kernel == Kernel::MatmulBias;
  const TensorRef &bias = forward ? c.in[2] : c.out[1];
  if (bias.dtype != y.dtype)
    c.fail(forward ? "the bias needs the result's dtype on cuda"
                   : "the bias gradient needs the result's dtype on cuda");
  const void *biasData = bias.data, *aux = nullptr;
  if (epilogue == CUBLASLT_EPILOGUE_RELU_AUX_BIAS || epilogue == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
    aux = c.out[1].data;
  else if (c.step.kernel == Kernel::MatmulActGrad)
    aux = c.in[2].data;
  checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue,
                                         sizeof epilogue), "epilogue");
  checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &biasData,
                                         sizeof biasData), "bias");
  if (aux) {
    int64_t ld = y.dim(-1);
    checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, &aux,
                                           sizeof aux), "epilogue input");
    checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, &ld,
                                           sizeof ld), "epilogue input stride");
  }
}

/// The step's GEMM with `epilogue`, or null where cuBLASLt has no
/// algorithm for it.
std::shared_ptr<Plan> planOf(LaunchContext &c, cublasLtEpilogue_t epilogue) {
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  if (a.dtype != b.dtype || a.dtype != y.dtype)
    c.fail("operands and result need one dtype on cuda");
  bool ta = c.attrs.getBool("transpose_a", false), tb = c.attrs.getBool("transpose_b", false);
  int64_t m = y.dim(-2), n = y.dim(-1), k = ta ? a.dim(-2) : a.dim(-1);
  std::vector<int64_t> batch(y.shape.begin(), y.shape.end() - 2);
  int64_t batches = numElements(batch), es = dtypeSize(a.dtype);
  auto plan = std::make_shared<Plan>();
  int64_t strideA = 0, strideB = 0, count = batches;
  bool folded = b.rank() == 2 && !ta;
  if (folded) { // a's batch dimensions fold into its rows
    m *= batches;
    count = 1;
  } else {
    std::vector<int64_t> ab(a.shape.begin(), a.shape.end() - 2), bb(b.shape.begin(), b.shape.end() - 2);
    bool aWhole = ab == batch, bWhole = bb == batch;
    bool aNone = numElements(ab) == 1, bNone = numElements(bb) == 1;
    if ((aWhole || aNone) && (bWhole || bNone)) {
      strideA = aNone ? 0 : a.dim(-1) * a.dim(-2);
      strideB = bNone ? 0 : b.dim(-1) * b.dim(-2);
    } else { // uneven broadcast: one call per batch
      count = 1;
      auto offsets = [&](const TensorRef &t, int64_t bi) {
        std::vector<int64_t> dims(t.shape.begin(), t.shape.end() - 2);
        size_t off = batch.size() - dims.size();
        int64_t at = 0, rest = bi, stride = t.dim(-1) * t.dim(-2);
        for (int64_t d = (int64_t)batch.size() - 1; d >= 0; --d) {
          int64_t idx = rest % batch[d];
          rest /= batch[d];
          if (d >= (int64_t)off && dims[d - off] != 1) {
            int64_t s = stride;
            for (size_t e = d - off + 1; e < dims.size(); ++e)
              s *= dims[e];
            at += idx * s;
          }
        }
        return at * es;
      };
      for (int64_t bi = 0; bi < batches; ++bi)
        plan->calls.push_back({offsets(a, bi), offsets(b, bi), bi * m * n * es});
    }
  }
  if (plan->calls.empty())
    plan->calls.push_back({0, 0, 0});
  cudaDataType_t type = cudaType(c, a.dtype);
  Gemm &g = plan->gemm;
  checkLt(cublasLtMatmulDescCreate(&g.desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "descriptor");
  cublasOperation_t opA = tb ? CUBLAS_OP_T : CUBLAS_OP_N, opB = ta ? CUBLAS_OP_T : CUBLAS_OP_N;
  checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSA, &opA, sizeof opA),
          "transpose");
  checkLt(cublasLtMatmulDescSetAttribute(g.desc, CUBLASLT_MATMUL_DESC_TRANSB, &opB, sizeof opB),
          "transpose");
  setEpilogue(c, g, epilogue);
  // Column-major views: Lt's A is our B ([K,N] row-major is [N,K] col-major).
  layout(g.a, type, tb ? k : n, tb ? n : k, tb ? k : n, count, strideB);
  layout(g.b, type, ta ? m : k, ta ? k : m, ta ? m : k, count, strideA);
  layout(g.c, type, n, m, n, count, m * n);
  cublasLtMatmulPreference_t pref;
  checkLt(cublasLtMatmulPreferenceCreate(&pref), "preference");
  size_t workspace = kWorkspace;
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                       sizeof workspace);
  // Per-batch calls may start at addresses less aligned than a buffer's:
  // the algorithm must allow them (Lt's A is our B).
  uint32_t alignLtA = alignmentOf(plan->calls, 1), alignLtB = alignmentOf(plan->calls, 0),
           alignC = alignmentOf(plan->calls, 2);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                                       &alignLtA, sizeof alignLtA);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                                       &alignLtB, sizeof alignLtB);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
                                       &alignC, sizeof alignC);
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
                                       &alignC, sizeof alignC);
  cublasLtMatmulHeuristicResult_t results[kCandidates];
  int found = 0;
  cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
      c.device.blasLt(), g.desc, g.a, g.b, g.c, g.c, pref, kCandidates, results, &found);
  cublasLtMatmulPreferenceDestroy(pref);
  if (status != CUBLAS_STATUS_SUCCESS || found == 0)
    return nullptr;
  for (int i = 0; i < found; ++i)
    if (results[i].state == CUBLAS_STATUS_SUCCESS)
      plan->candidates.push_back(results[i].algo);
  if (plan->candidates.empty())
    return nullptr;
  g.algo = plan->candidates[0];
  for (int64_t v : {(int64_t)epilogue, (int64_t)type, (int64_t)ta, (int64_t)tb, m, n, k, count,
                    strideA, strideB, (int64_t)alignLtA, (int64_t)alignLtB, (int64_t)alignC,
                    (int64_t)plan->calls.size()})
    plan->problem += std::to_string(v) + ",";
  return plan;
}

/// The step's GEMM: with its epilogue, else (where the step can finish it
/// itself) with the fallback's.
std::shared_ptr<Plan> chooseGemm(LaunchContext &c) {
  if (auto plan = planOf(c, epilogueOf(c, false)))
    return plan;
  if (canFallBack(c))
    if (auto plan = planOf(c, epilogueOf(c, true))) {
      plan->fallback = true;
      // Slower (one more pass over the result), and the user should know.
      std::fprintf(stderr,
                   "ampc: note: step '%s' (%s): cuBLASLt has no algorithm for its epilogue; "
                   "a plain GEMM and ampc's kernels finish it\n",
                   c.step.name.c_str(), kernelName(c.step.kernel));
      return plan;
    }
  c.fail("cuBLASLt has no algorithm for this matmul");
}

/// Queues the step's calls with `algo`: the first failure's status.
cublasStatus_t queueCalls(LaunchContext &c, const Plan &plan, const cublasLtMatmulAlgo_t &algo) {
  const TensorRef &a = c.in[0], &b = c.in[1], &y = c.out[0];
  std::byte *workspace = c.device.scratch(kWorkspace);
  float one = 1.0f, zero = 0.0f;
  for (const auto &[offA, offB, offC] : plan.calls) {
    cublasStatus_t status = cublasLtMatmul(
        c.device.blasLt(), plan.gemm.desc, &one, b.as<std::byte>() + offB, plan.gemm.a,
        a.as<std::byte>() + offA, plan.gemm.b, &zero, y.as<std::byte>() + offC, plan.gemm.c,
        y.as<std::byte>() + offC, plan.gemm.c, &algo, workspace, kWorkspace, c.stream());
    if (status != CUBLAS_STATUS_SUCCESS)
      return status;
  }
  return CUBLAS_STATUS_SUCCESS;
}

/// The algorithms tuning chose, per problem, for the process: a model's
/// repeated layers are timed once, and a later program (the next run, the
/// backend check's replay) runs the same algorithms, so the same bits.
std::map<std::string, cublasLtMatmulAlgo_t> &tunedAlgorithms(std::unique_lock<std::mutex> &lock) {
  static std::mutex mutex;
  static std::map<std::string, cublasLtMatmulAlgo_t> chosen;
  lock = std::unique_lock<std::mutex>(mutex);
  return chosen;
}

/// Replaces the heuristic's first choice by the fastest candidate on this
/// step's operands. Every call writes the same results (no step accumulates
/// into its output), so the timing runs leave nothing behind that the
/// step's own call does not overwrite. Not while the stream is captured.
void tune(LaunchContext &c, Plan &plan) {
  if (!c.tuneGemms || plan.candidates.size() < 2 || capturing(c.stream()))
    return;
  std::unique_lock<std::mutex> lock;
  auto &chosen = tunedAlgorithms(lock);
  auto known = chosen.find(plan.problem);
  if (known == chosen.end()) {
    int best = fastestCandidate(c.stream(), (int)plan.candidates.size(), [&](int i) {
      return queueCalls(c, plan, plan.candidates[i]) == CUBLAS_STATUS_SUCCESS;
    });
    known = chosen.emplace(plan.problem, plan.candidates[best]).first;
  }
  plan.gemm.algo = known->second;
}

void matmul(LaunchContext &c) {
  const TensorRef &a = c.in[0], &y = c.out[0];
  if (y.size() == 0)
    return;
  int64_t k = c.attrs.getBool("transpose_a", false) ? a.dim(-2) : a.dim(-1);
  if (k == 0 && c.step.kernel != Kernel::Matmul)
    c.fail(std::string(kernelName(c.step.kernel)) + " of an empty sum is not supported on cuda");
  if (k == 0) { // an empty sum
    AMPC_CUDA_CHECK(cudaMemsetAsync(y.data, 0, y.bytes(), c.stream()));
    return;
  }
  if (!c.cache) {
    c.cache = chooseGemm(c);
    tune(c, *std::static_pointer_cast<Plan>(c.cache));
  }
  Plan &plan = *std::static_pointer_cast<Plan>(c.cache);
  checkLt(queueCalls(c, plan, plan.gemm.algo), "matmul");
  if (plan.fallback)
    finishEpilogue(c);
}

} // namespace

void addMatmulKernels(KernelTable &t) {
  t[Kernel::Matmul] = matmul;
  t[Kernel::MatmulBias] = matmul;
  t[Kernel::MatmulActGrad] = matmul;
  t[Kernel::MatmulBiasGrad] = matmul;
}

} // namespace ampc::rt::cuda
