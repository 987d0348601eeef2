// The part of cuBLASLt that Matmul.cu calls, on the host (docs/cuda.md,
// "The CUDA emulation"): column-major D = alpha op(A) op(B) + beta C in f32,
// batched by stride, with one rounding to D's type, and the epilogues
// Matmul.cu sets, as cublasLt.h defines them: BIAS, RELU_BIAS and GELU_BIAS
// (the tanh GELU); RELU_AUX_BIAS and GELU_AUX_BIAS, which also write the
// relu bit mask (bit i + j·ld of the aux buffer: D(i, j) > 0) or the GELU's
// input (D's type, leading dimension ld); DRELU_BGRAD and DGELU_BGRAD, which
// multiply the product by the derivative the aux buffer gives (or, for the
// relu with AMPC_EMULATED_LT_DRELU=select, keep it where the mask is set
// and write 0 elsewhere) and write the bias gradient (the sum of each row
// of the f32 result); and BGRADA (the sum of each row of op(A), over k).
// Descriptors are checked as cuBLASLt checks them (each operand's rows and
// columns against m, n and k, a leading dimension at least its rows, one
// batch count, an aux leading dimension a multiple of 128 bits or 8
// elements), so a wrong layout is an error here as there. With
// AMPC_EMULATED_LT_AUX=0 it offers no algorithm for the aux and gradient
// epilogues, as a cuBLASLt without them would: those steps then run a plain
// GEMM and finish in ampc's own kernels (MatmulFallback.cu), which the
// emulation so holds to the CPU as well.
// FP8 GEMMs (Fp8Gemm.cu) take the rules of cuBLASLt's: E4M3 or E5M2
// operands (not both E5M2) in the TN layout, m, n, k and the leading
// dimensions multiples of 16, no epilogue, and D = scale_A · scale_B ·
// op(A) op(B) from the A and B scale pointers.
#include <cublasLt.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/cuda/CudaCommon.h"
#include "runtime/cuda/emulator/Emulator.h"
#include "runtime/numerics/Activations.h"

namespace {

using ampc::rt::DType;
using ampc::rt::dtypeSize;
using ampc::rt::isFp8;
using ampc::rt::cuda::load;
using ampc::rt::cuda::store;

// Each heuristic lists three algorithms that compute alike; the third fails
// when run, as an algorithm can.
constexpr int kCandidates = 3;
constexpr uint64_t kFailing = 2;

struct Desc {
  cublasOperation_t transA = CUBLAS_OP_N, transB = CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  const void *bias = nullptr; // the bias, or where a gradient epilogue writes its gradient
  void *aux = nullptr; // the relu mask or GELU input: written forward, read backward
  int64_t auxLd = 0;
  const float *scaleA = nullptr, *scaleB = nullptr; // FP8's dequantizing scales
};

struct Layout {
  DType type; // f32, f16, bf16 or an FP8; else I64, which no GEMM here takes
  uint64_t rows, cols;
  int64_t ld;
  int32_t batch = 1;
  int64_t stride = 0;
};

Desc &descOf(cublasLtMatmulDesc_t d) { return *reinterpret_cast<Desc *>(d); }
const Layout &layoutOf(cublasLtMatrixLayout_t l) { return *reinterpret_cast<Layout *>(l); }

DType dtypeOf(cudaDataType type) {
  switch (type) {
  case CUDA_R_32F: return DType::F32;
  case CUDA_R_16F: return DType::F16;
  case CUDA_R_16BF: return DType::BF16;
  case CUDA_R_8F_E4M3: return DType::F8E4M3;
  case CUDA_R_8F_E5M2: return DType::F8E5M2;
  default: return DType::I64;
  }
}

bool supported(DType type) { return type != DType::I64; }

/// Whether A and B of these types make a GEMM here: one type, or two FP8
/// types as cuBLASLt's FP8 GEMMs take them.
bool operandTypes(const Desc &d, const Layout &a, const Layout &b, const Layout &dl, int64_t m,
                  int64_t n, int64_t k) {
  if (!isFp8(a.type) && !isFp8(b.type))
    return supported(a.type) && a.type == b.type && !isFp8(dl.type);
  bool bothFp8 = isFp8(a.type) && isFp8(b.type) &&
                 !(a.type == DType::F8E5M2 && b.type == DType::F8E5M2);
  bool tn = d.transA == CUBLAS_OP_T && d.transB == CUBLAS_OP_N;
  bool sixteens = m % 16 == 0 && n % 16 == 0 && k % 16 == 0 && a.ld % 16 == 0 &&
                  b.ld % 16 == 0 && dl.ld % 16 == 0;
  return bothFp8 && tn && sixteens && d.epilogue == CUBLASLT_EPILOGUE_DEFAULT;
}

/// A new handle of cuBLASLt's opaque type `Handle` holding `value`, and its end.
template <typename Handle, typename T> cublasStatus_t create(Handle *handle, T value) {
  *handle = reinterpret_cast<Handle>(new T(value));
  return CUBLAS_STATUS_SUCCESS;
}
template <typename T, typename Handle> cublasStatus_t destroy(Handle handle) {
  delete reinterpret_cast<T *>(handle);
  return CUBLAS_STATUS_SUCCESS;
}

/// m, n and k of the problem, or false where the layouts do not fit one.
bool dimsOf(const Desc &d, const Layout &a, const Layout &b, const Layout &c, const Layout &dl,
            int64_t &m, int64_t &n, int64_t &k) {
  m = (int64_t)dl.rows, n = (int64_t)dl.cols;
  k = (int64_t)(d.transA == CUBLAS_OP_N ? a.cols : a.rows);
  bool aFits = (int64_t)(d.transA == CUBLAS_OP_N ? a.rows : a.cols) == m;
  bool bFits = d.transB == CUBLAS_OP_N ? (int64_t)b.rows == k && (int64_t)b.cols == n
                                       : (int64_t)b.cols == k && (int64_t)b.rows == n;
  bool cFits = c.rows == dl.rows && c.cols == dl.cols;
  bool lds = a.ld >= (int64_t)a.rows && b.ld >= (int64_t)b.rows && c.ld >= (int64_t)c.rows &&
             dl.ld >= (int64_t)dl.rows;
  bool batches = a.batch == dl.batch && b.batch == dl.batch && c.batch == dl.batch;
  bool types = operandTypes(d, a, b, dl, m, n, k) && supported(dl.type) && c.type == dl.type;
  return aFits && bFits && cFits && lds && batches && types;
}

bool isReluMask(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_DRELU_BGRAD;
}
bool isGeluInput(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS || e == CUBLASLT_EPILOGUE_DGELU_BGRAD;
}
bool isGradient(cublasLtEpilogue_t e) {
  return e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD ||
         e == CUBLASLT_EPILOGUE_BGRADA;
}

/// Whether an algorithm here runs `d`'s epilogue on an m-row D of `batch`
/// batches: a CUBLAS_STATUS_ value, as the heuristic answers.
cublasStatus_t epilogueStatus(const Desc &d, int64_t m, int32_t batch) {
  cublasLtEpilogue_t e = d.epilogue;
  if (e == CUBLASLT_EPILOGUE_DEFAULT)
    return CUBLAS_STATUS_SUCCESS;
  bool plain = e == CUBLASLT_EPILOGUE_BIAS || e == CUBLASLT_EPILOGUE_RELU_BIAS ||
               e == CUBLASLT_EPILOGUE_GELU_BIAS;
  bool aux = isReluMask(e) || isGeluInput(e);
  if (!plain && !aux && e != CUBLASLT_EPILOGUE_BGRADA)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!plain && ampc::emu::switchedOn("AMPC_EMULATED_LT_AUX", "0", "1"))
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (!d.bias)
    return CUBLAS_STATUS_INVALID_VALUE;
  // No aux or bias batch strides are set: one batch.
  if (!plain && batch != 1)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  if (aux && (!d.aux || d.auxLd < m || d.auxLd % (isReluMask(e) ? 128 : 8) != 0))
    return CUBLAS_STATUS_INVALID_VALUE;
  return CUBLAS_STATUS_SUCCESS;
}

/// Bit `bit` of the relu mask at `mask`.
bool maskBit(const void *mask, int64_t bit) {
  return (static_cast<const uint32_t *>(mask)[bit / 32] >> (bit % 32)) & 1u;
}
void setMaskBit(void *mask, int64_t bit, bool on) {
  uint32_t &word = static_cast<uint32_t *>(mask)[bit / 32];
  word = on ? word | (1u << (bit % 32)) : word & ~(1u << (bit % 32));
}

} // namespace

extern "C" {

cublasStatus_t cublasLtMatmulDescCreate(cublasLtMatmulDesc_t *desc, cublasComputeType_t compute,
                                        cudaDataType_t scale) {
  if (compute != CUBLAS_COMPUTE_32F || scale != CUDA_R_32F)
    return CUBLAS_STATUS_NOT_SUPPORTED;
  return create(desc, Desc{});
}

cublasStatus_t cublasLtMatmulDescDestroy(cublasLtMatmulDesc_t desc) { return destroy<Desc>(desc); }

cublasStatus_t cublasLtMatmulDescSetAttribute(cublasLtMatmulDesc_t desc,
                                              cublasLtMatmulDescAttributes_t attr,
                                              const void *buf, size_t bytes) {
  Desc &d = descOf(desc);
  switch (attr) {
  case CUBLASLT_MATMUL_DESC_TRANSA: std::memcpy(&d.transA, buf, sizeof d.transA); break;
  case CUBLASLT_MATMUL_DESC_TRANSB: std::memcpy(&d.transB, buf, sizeof d.transB); break;
  case CUBLASLT_MATMUL_DESC_EPILOGUE: std::memcpy(&d.epilogue, buf, sizeof d.epilogue); break;
  case CUBLASLT_MATMUL_DESC_BIAS_POINTER: std::memcpy(&d.bias, buf, sizeof d.bias); break;
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER: std::memcpy(&d.aux, buf, sizeof d.aux); break;
  case CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD: std::memcpy(&d.auxLd, buf, sizeof d.auxLd); break;
  case CUBLASLT_MATMUL_DESC_A_SCALE_POINTER: std::memcpy(&d.scaleA, buf, sizeof d.scaleA); break;
  case CUBLASLT_MATMUL_DESC_B_SCALE_POINTER: std::memcpy(&d.scaleB, buf, sizeof d.scaleB); break;
  default: return CUBLAS_STATUS_NOT_SUPPORTED;
  }
  (void)bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatrixLayoutCreate(cublasLtMatrixLayout_t *layout, cudaDataType type,
                                          uint64_t rows, uint64_t cols, int64_t ld) {
  return create(layout, Layout{dtypeOf(type), rows, cols, ld});
}

cublasStatus_t cublasLtMatrixLayoutDestroy(cublasLtMatrixLayout_t layout) {
  return destroy<Layout>(layout);
}

cublasStatus_t cublasLtMatrixLayoutSetAttribute(cublasLtMatrixLayout_t layout,
                                                cublasLtMatrixLayoutAttribute_t attr,
                                                const void *buf, size_t bytes) {
  Layout &l = *reinterpret_cast<Layout *>(layout);
  if (attr == CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT)
    std::memcpy(&l.batch, buf, sizeof l.batch);
  else if (attr == CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET)
    std::memcpy(&l.stride, buf, sizeof l.stride);
  else
    return CUBLAS_STATUS_NOT_SUPPORTED;
  (void)bytes;
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulPreferenceCreate(cublasLtMatmulPreference_t *pref) {
  return create(pref, char{}); // nothing it sets changes the choice here
}

cublasStatus_t cublasLtMatmulPreferenceDestroy(cublasLtMatmulPreference_t pref) {
  return destroy<char>(pref);
}

cublasStatus_t cublasLtMatmulPreferenceSetAttribute(cublasLtMatmulPreference_t,
                                                    cublasLtMatmulPreferenceAttributes_t,
                                                    const void *, size_t) {
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmulAlgoGetHeuristic(cublasLtHandle_t, cublasLtMatmulDesc_t desc,
                                              cublasLtMatrixLayout_t a, cublasLtMatrixLayout_t b,
                                              cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                              cublasLtMatmulPreference_t, int requested,
                                              cublasLtMatmulHeuristicResult_t results[],
                                              int *returned) {
  *returned = 0;
  int64_t m, n, k;
  if (!dimsOf(descOf(desc), layoutOf(a), layoutOf(b), layoutOf(c), layoutOf(d), m, n, k))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (cublasStatus_t status = epilogueStatus(descOf(desc), m, layoutOf(d).batch);
      status != CUBLAS_STATUS_SUCCESS)
    return status;
  if (requested < 1)
    return CUBLAS_STATUS_INVALID_VALUE;
  // GEMM tuning times them all, and must pass the failing one by.
  *returned = std::min(requested, kCandidates);
  for (int i = 0; i < *returned; ++i) {
    std::memset(&results[i], 0, sizeof results[i]);
    results[i].algo.data[0] = (uint64_t)i;
    results[i].state = CUBLAS_STATUS_SUCCESS;
  }
  return CUBLAS_STATUS_SUCCESS;
}

cublasStatus_t cublasLtMatmul(cublasLtHandle_t, cublasLtMatmulDesc_t desc, const void *alpha,
                              const void *A, cublasLtMatrixLayout_t aDesc, const void *B,
                              cublasLtMatrixLayout_t bDesc, const void *beta, const void *C,
                              cublasLtMatrixLayout_t cDesc, void *D, cublasLtMatrixLayout_t dDesc,
                              const cublasLtMatmulAlgo_t *algo, void *, size_t,
                              cudaStream_t) {
  Desc d = descOf(desc);
  Layout a = layoutOf(aDesc), b = layoutOf(bDesc), c = layoutOf(cDesc), dl = layoutOf(dDesc);
  int64_t m, n, k;
  if (!dimsOf(d, a, b, c, dl, m, n, k))
    return CUBLAS_STATUS_INVALID_VALUE;
  if (cublasStatus_t status = epilogueStatus(d, m, dl.batch); status != CUBLAS_STATUS_SUCCESS)
    return status;
  if (!algo || algo->data[0] >= kFailing)
    return CUBLAS_STATUS_NOT_SUPPORTED;

  float one = *static_cast<const float *>(alpha), other = *static_cast<const float *>(beta);
  ampc::emu::submit([=] {
    ampc::num::GeluTanh gelu;
    ampc::num::Relu relu;
    // op(A) by rows and op(B) by columns, widened once: every sum then
    // reads two contiguous rows of f32.
    std::vector<float> rowsA(m * k), colsB(n * k), gradient(m);
    float scale = one * (d.scaleA ? *d.scaleA : 1.0f) * (d.scaleB ? *d.scaleB : 1.0f);
    // cublasLt.h does not say whether the relu gradient multiplies by the
    // mask (0 · inf is NaN, as on the CPU) or selects (0): both, by switch.
    bool selects = ampc::emu::switchedOn("AMPC_EMULATED_LT_DRELU", "select", "multiply");
    cublasLtEpilogue_t e = d.epilogue;
    for (int32_t batch = 0; batch < dl.batch; ++batch) {
      auto *pa = static_cast<const char *>(A) + batch * a.stride * dtypeSize(a.type);
      auto *pb = static_cast<const char *>(B) + batch * b.stride * dtypeSize(b.type);
      auto *pc = static_cast<const char *>(C) + batch * c.stride * dtypeSize(c.type);
      auto *pd = static_cast<char *>(D) + batch * dl.stride * dtypeSize(dl.type);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          rowsA[i * k + p] =
              load(pa, a.type, d.transA == CUBLAS_OP_N ? i + p * a.ld : p + i * a.ld);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t p = 0; p < k; ++p)
          colsB[j * k + p] =
              load(pb, b.type, d.transB == CUBLAS_OP_N ? p + j * b.ld : j + p * b.ld);
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i < m; ++i) {
          const float *x = &rowsA[i * k], *y = &colsB[j * k];
          float part[8] = {}; // eight partial sums, added in a fixed order
          int64_t p = 0;
          for (; p + 8 <= k; p += 8)
            for (int q = 0; q < 8; ++q)
              part[q] += x[p + q] * y[p + q];
          for (; p < k; ++p)
            part[0] += x[p] * y[p];
          float v = scale * (((part[0] + part[1]) + (part[2] + part[3])) +
                           ((part[4] + part[5]) + (part[6] + part[7])));
          if (other != 0)
            v += other * load(pc, c.type, i + j * c.ld);
          int64_t at = i + j * d.auxLd; // the aux element (or bit) of D(i, j)
          if (e == CUBLASLT_EPILOGUE_DRELU_BGRAD && selects)
            v = maskBit(d.aux, at) ? v : 0.0f;
          else if (e == CUBLASLT_EPILOGUE_DRELU_BGRAD)
            v *= maskBit(d.aux, at) ? 1.0f : 0.0f;
          else if (e == CUBLASLT_EPILOGUE_DGELU_BGRAD)
            v *= gelu.derivative(load(d.aux, dl.type, at), 0.0f);
          else if (e != CUBLASLT_EPILOGUE_DEFAULT && e != CUBLASLT_EPILOGUE_BGRADA)
            v += load(d.bias, dl.type, i);
          if (e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
            store(d.aux, dl.type, at, v);
          if (e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS)
            setMaskBit(d.aux, at, v > 0.0f);
          if (e == CUBLASLT_EPILOGUE_RELU_BIAS || e == CUBLASLT_EPILOGUE_RELU_AUX_BIAS)
            v = relu.value(v);
          else if (e == CUBLASLT_EPILOGUE_GELU_BIAS || e == CUBLASLT_EPILOGUE_GELU_AUX_BIAS)
            v = gelu.value(v);
          if (e == CUBLASLT_EPILOGUE_DRELU_BGRAD || e == CUBLASLT_EPILOGUE_DGELU_BGRAD)
            gradient[i] += v;
          store(pd, dl.type, i + j * dl.ld, v);
        }
      if (e == CUBLASLT_EPILOGUE_BGRADA)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t p = 0; p < k; ++p)
            gradient[i] += rowsA[i * k + p];
      if (isGradient(e))
        for (int64_t i = 0; i < m; ++i)
          store(const_cast<void *>(d.bias), dl.type, i, gradient[i]);
    }
  });
  return CUBLAS_STATUS_SUCCESS;
}

} // extern "C"
