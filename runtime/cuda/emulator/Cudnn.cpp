// The part of cuDNN that Conv.cu calls, on the host (docs/cuda.md, "The CUDA
// emulation"): 2-D cross-correlation forward, backward data and backward
// filter, NCHW or NHWC tensors and KCRS or KRSC filters as their
// descriptors' formats say, with padding, strides, dilation and groups,
// summed in f32 in a fixed order and rounded once: y = alpha·Σ + beta·y.
// Descriptors are checked as cuDNN checks them (one data type, the input's
// channels the filter's times the groups, the output's shape the one
// cudnnGetConvolution2dForwardOutputDim gives), so a wrong dimension or
// format is an error here as there. The heuristics offer a
// nondeterministic algorithm first, then a deterministic one that asks
// for workspace; running the nondeterministic one, or with less workspace
// than asked, is refused, so the step's choice and its scratch are held too.
#include <cudnn.h>

#include <cstring>
#include <vector>

#include "runtime/cuda/CudaCommon.h"
#include "runtime/cuda/emulator/Emulator.h"

namespace {

using ampc::rt::DType;
using ampc::rt::cuda::load;
using ampc::rt::cuda::store;

constexpr size_t kWorkspace = 4096; // what the deterministic algorithms ask for

struct Tensor {
  cudnnTensorFormat_t format = CUDNN_TENSOR_NCHW;
  cudnnDataType_t type = CUDNN_DATA_FLOAT;
  int n = 0, c = 0, h = 0, w = 0;
  /// Where element (n, c, h, w) is, by the format.
  int64_t at(int in, int ic, int ih, int iw) const {
    return format == CUDNN_TENSOR_NHWC ? ((int64_t(in) * h + ih) * w + iw) * c + ic
                                       : ((int64_t(in) * c + ic) * h + ih) * w + iw;
  }
};
using Filter = Tensor; // n: output channels (k), c: input channels of a group

struct Convolution {
  int padH = 0, padW = 0, strideH = 1, strideW = 1, dilationH = 1, dilationW = 1;
  int groups = 1;
};

template <typename T, typename Handle> T &of(Handle h) { return *reinterpret_cast<T *>(h); }
template <typename T, typename Handle> cudnnStatus_t create(Handle *h) {
  *h = reinterpret_cast<Handle>(new T());
  return CUDNN_STATUS_SUCCESS;
}
template <typename T, typename Handle> cudnnStatus_t destroy(Handle h) {
  delete reinterpret_cast<T *>(h);
  return CUDNN_STATUS_SUCCESS;
}

DType dtypeOf(cudnnDataType_t type) {
  return type == CUDNN_DATA_HALF ? DType::F16 : type == CUDNN_DATA_BFLOAT16 ? DType::BF16 : DType::F32;
}

bool sizes(const Tensor &t) { return t.n > 0 && t.c > 0 && t.h > 0 && t.w > 0; }

int outputSize(int in, int pad, int kernel, int dilation, int stride) {
  return (in + 2 * pad - ((kernel - 1) * dilation + 1)) / stride + 1;
}

/// Whether x, w and y make one convolution under `conv`.
bool fits(const Tensor &x, const Filter &w, const Convolution &conv, const Tensor &y) {
  bool types = (x.type == CUDNN_DATA_FLOAT || x.type == CUDNN_DATA_HALF ||
                x.type == CUDNN_DATA_BFLOAT16) && x.type == w.type && x.type == y.type;
  return types && sizes(x) && sizes(w) && sizes(y) && x.c == w.c * conv.groups &&
         w.n % conv.groups == 0 && y.n == x.n && y.c == w.n &&
         y.h == outputSize(x.h, conv.padH, w.h, conv.dilationH, conv.strideH) &&
         y.w == outputSize(x.w, conv.padW, w.w, conv.dilationW, conv.strideW);
}

/// Calls f(xAt, wAt, yAt) for every product of the convolution, in one
/// fixed order; xAt is -1 where the filter reads the padding. The padding's
/// zeros are multiplied as the CPU's and cuDNN's GEMMs multiply them: by an
/// inf, they give NaN.
template <typename F>
void eachProduct(const Tensor &x, const Filter &w, const Convolution &cv, const Tensor &y, F f) {
  int kPerGroup = w.n / cv.groups;
  for (int n = 0; n < y.n; ++n)
    for (int k = 0; k < y.c; ++k) {
      int g = k / kPerGroup;
      for (int oh = 0; oh < y.h; ++oh)
        for (int ow = 0; ow < y.w; ++ow)
          for (int r = 0; r < w.h; ++r)
            for (int s = 0; s < w.w; ++s) {
              int ih = oh * cv.strideH - cv.padH + r * cv.dilationH;
              int iw = ow * cv.strideW - cv.padW + s * cv.dilationW;
              bool padding = ih < 0 || ih >= x.h || iw < 0 || iw >= x.w;
              for (int c = 0; c < w.c; ++c)
                f(padding ? -1 : x.at(n, g * w.c + c, ih, iw), w.at(k, c, r, s),
                  y.at(n, k, oh, ow));
            }
    }
}

/// The n elements at p as f32 (none where p is null: the result).
std::vector<float> widened(const void *p, cudnnDataType_t type, int64_t n) {
  std::vector<float> v(p ? n : 0);
  for (int64_t i = 0; i < (int64_t)v.size(); ++i)
    v[i] = load(p, dtypeOf(type), i);
  return v;
}

int64_t elements(const Tensor &t) { return int64_t(t.n) * t.c * t.h * t.w; }

/// Whether a convolution may run with `algo` and this workspace.
bool runnable(int algo, const void *workspace, size_t bytes) {
  return algo == 1 && workspace && bytes >= kWorkspace;
}

/// Which of x, w and y a call computes (the other two it reads).
enum class Result { X, W, Y };

/// The call's result = alpha·sums + beta·result, each sum in f32 over the
/// products that add to the element, the two operands read widened once;
/// BAD_PARAM where the descriptors do not make one convolution or the
/// algorithm or workspace may not run.
cudnnStatus_t convolve(cudnnTensorDescriptor_t xd, const void *px, cudnnFilterDescriptor_t wd,
                       const void *pw, cudnnConvolutionDescriptor_t cd,
                       cudnnTensorDescriptor_t yd, const void *py, int algo, void *workspace,
                       size_t bytes, const void *alpha, const void *beta, Result result,
                       void *out) {
  const Tensor x = of<Tensor>(xd), y = of<Tensor>(yd);
  const Filter w = of<Filter>(wd);
  const Convolution cv = of<Convolution>(cd);
  if (!fits(x, w, cv, y) || !runnable(algo, workspace, bytes))
    return CUDNN_STATUS_BAD_PARAM;
  const Tensor &to = result == Result::X ? x : result == Result::W ? w : y;
  float a = *static_cast<const float *>(alpha), b = *static_cast<const float *>(beta);
  ampc::emu::submit([=] {
    std::vector<float> vx = widened(px, x.type, elements(x)), vw = widened(pw, w.type, elements(w)),
                       vy = widened(py, y.type, elements(y)), sums(elements(to), 0.0f);
    eachProduct(x, w, cv, y, [&](int64_t xi, int64_t wi, int64_t yi) {
      int64_t at = result == Result::X ? xi : result == Result::W ? wi : yi;
      if (at < 0) // the gradient of the padding: no element
        return;
      // The result's factor is 1 (exact); the padding reads 0.
      float xv = result == Result::X ? 1.0f : xi < 0 ? 0.0f : vx[xi];
      float wv = result == Result::W ? 1.0f : vw[wi], yv = result == Result::Y ? 1.0f : vy[yi];
      sums[at] += xv * wv * yv;
    });
    DType type = dtypeOf(to.type);
    for (int64_t i = 0; i < (int64_t)sums.size(); ++i)
      store(out, type, i, a * sums[i] + (b != 0.0f ? b * load(out, type, i) : 0.0f));
  });
  return CUDNN_STATUS_SUCCESS;
}

template <typename Perf>
cudnnStatus_t offer(bool fit, int requested, int *returned, Perf *results) {
  *returned = 0;
  if (!fit)
    return CUDNN_STATUS_BAD_PARAM;
  if (requested < 2)
    return CUDNN_STATUS_BAD_PARAM;
  std::memset(results, 0, 2 * sizeof(Perf));
  results[0].algo = decltype(results[0].algo)(0);
  results[0].determinism = CUDNN_NON_DETERMINISTIC;
  results[1].algo = decltype(results[1].algo)(1);
  results[1].determinism = CUDNN_DETERMINISTIC;
  results[1].memory = kWorkspace;
  *returned = 2;
  return CUDNN_STATUS_SUCCESS;
}

} // namespace

extern "C" {

cudnnStatus_t cudnnCreateTensorDescriptor(cudnnTensorDescriptor_t *d) { return create<Tensor>(d); }
cudnnStatus_t cudnnDestroyTensorDescriptor(cudnnTensorDescriptor_t d) { return destroy<Tensor>(d); }
cudnnStatus_t cudnnCreateFilterDescriptor(cudnnFilterDescriptor_t *d) { return create<Filter>(d); }
cudnnStatus_t cudnnDestroyFilterDescriptor(cudnnFilterDescriptor_t d) { return destroy<Filter>(d); }
cudnnStatus_t cudnnCreateConvolutionDescriptor(cudnnConvolutionDescriptor_t *d) {
  return create<Convolution>(d);
}
cudnnStatus_t cudnnDestroyConvolutionDescriptor(cudnnConvolutionDescriptor_t d) {
  return destroy<Convolution>(d);
}

cudnnStatus_t cudnnSetTensor4dDescriptor(cudnnTensorDescriptor_t d, cudnnTensorFormat_t format,
                                         cudnnDataType_t type, int n, int c, int h, int w) {
  if (n <= 0 || c <= 0 || h <= 0 || w <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  of<Tensor>(d) = Tensor{format, type, n, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetFilter4dDescriptor(cudnnFilterDescriptor_t d, cudnnDataType_t type,
                                         cudnnTensorFormat_t format, int k, int c, int h, int w) {
  if (k <= 0 || c <= 0 || h <= 0 || w <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  of<Filter>(d) = Filter{format, type, k, c, h, w};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolution2dDescriptor(cudnnConvolutionDescriptor_t d, int padH, int padW,
                                              int strideH, int strideW, int dilationH,
                                              int dilationW, cudnnConvolutionMode_t mode,
                                              cudnnDataType_t compute) {
  if (padH < 0 || padW < 0 || strideH <= 0 || strideW <= 0 || dilationH <= 0 || dilationW <= 0 ||
      mode != CUDNN_CROSS_CORRELATION || compute != CUDNN_DATA_FLOAT)
    return CUDNN_STATUS_BAD_PARAM; // the emulation computes in f32 only
  Convolution &cv = of<Convolution>(d);
  cv = Convolution{padH, padW, strideH, strideW, dilationH, dilationW, cv.groups};
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionGroupCount(cudnnConvolutionDescriptor_t d, int groups) {
  if (groups <= 0)
    return CUDNN_STATUS_BAD_PARAM;
  of<Convolution>(d).groups = groups;
  return CUDNN_STATUS_SUCCESS;
}

cudnnStatus_t cudnnSetConvolutionMathType(cudnnConvolutionDescriptor_t, cudnnMathType_t) {
  return CUDNN_STATUS_SUCCESS; // sums are f32 here whatever the math type
}

cudnnStatus_t cudnnGetConvolution2dForwardOutputDim(const cudnnConvolutionDescriptor_t d,
                                                    const cudnnTensorDescriptor_t xd,
                                                    const cudnnFilterDescriptor_t wd, int *n,
                                                    int *c, int *h, int *w) {
  const Convolution &cv = of<Convolution>(d);
  const Tensor &x = of<Tensor>(xd);
  const Filter &f = of<Filter>(wd);
  if (x.c != f.c * cv.groups)
    return CUDNN_STATUS_BAD_PARAM;
  *n = x.n;
  *c = f.n;
  *h = outputSize(x.h, cv.padH, f.h, cv.dilationH, cv.strideH);
  *w = outputSize(x.w, cv.padW, f.w, cv.dilationW, cv.strideW);
  return *h > 0 && *w > 0 ? CUDNN_STATUS_SUCCESS : CUDNN_STATUS_BAD_PARAM;
}

cudnnStatus_t cudnnGetConvolutionForwardAlgorithm_v7(
    cudnnHandle_t, const cudnnTensorDescriptor_t x, const cudnnFilterDescriptor_t w,
    const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t y, const int requested,
    int *returned, cudnnConvolutionFwdAlgoPerf_t *results) {
  return offer(fits(of<Tensor>(x), of<Filter>(w), of<Convolution>(cv), of<Tensor>(y)), requested,
               returned, results);
}

cudnnStatus_t cudnnGetConvolutionBackwardDataAlgorithm_v7(
    cudnnHandle_t, const cudnnFilterDescriptor_t w, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t cv, const cudnnTensorDescriptor_t dx, const int requested,
    int *returned, cudnnConvolutionBwdDataAlgoPerf_t *results) {
  return offer(fits(of<Tensor>(dx), of<Filter>(w), of<Convolution>(cv), of<Tensor>(dy)),
               requested, returned, results);
}

cudnnStatus_t cudnnGetConvolutionBackwardFilterAlgorithm_v7(
    cudnnHandle_t, const cudnnTensorDescriptor_t x, const cudnnTensorDescriptor_t dy,
    const cudnnConvolutionDescriptor_t cv, const cudnnFilterDescriptor_t dw, const int requested,
    int *returned, cudnnConvolutionBwdFilterAlgoPerf_t *results) {
  return offer(fits(of<Tensor>(x), of<Filter>(dw), of<Convolution>(cv), of<Tensor>(dy)),
               requested, returned, results);
}

cudnnStatus_t cudnnConvolutionForward(cudnnHandle_t, const void *alpha,
                                      const cudnnTensorDescriptor_t xd, const void *x,
                                      const cudnnFilterDescriptor_t wd, const void *w,
                                      const cudnnConvolutionDescriptor_t cd,
                                      cudnnConvolutionFwdAlgo_t algo, void *workspace,
                                      size_t bytes, const void *beta,
                                      const cudnnTensorDescriptor_t yd, void *y) {
  return convolve(xd, x, wd, w, cd, yd, nullptr, algo, workspace, bytes, alpha, beta, Result::Y,
                  y);
}

cudnnStatus_t cudnnConvolutionBackwardData(cudnnHandle_t, const void *alpha,
                                           const cudnnFilterDescriptor_t wd, const void *w,
                                           const cudnnTensorDescriptor_t dyd, const void *dy,
                                           const cudnnConvolutionDescriptor_t cd,
                                           cudnnConvolutionBwdDataAlgo_t algo, void *workspace,
                                           size_t bytes, const void *beta,
                                           const cudnnTensorDescriptor_t dxd, void *dx) {
  return convolve(dxd, nullptr, wd, w, cd, dyd, dy, algo, workspace, bytes, alpha, beta,
                  Result::X, dx);
}

cudnnStatus_t cudnnConvolutionBackwardFilter(cudnnHandle_t, const void *alpha,
                                             const cudnnTensorDescriptor_t xd, const void *x,
                                             const cudnnTensorDescriptor_t dyd, const void *dy,
                                             const cudnnConvolutionDescriptor_t cd,
                                             cudnnConvolutionBwdFilterAlgo_t algo,
                                             void *workspace, size_t bytes, const void *beta,
                                             const cudnnFilterDescriptor_t dwd, void *dw) {
  return convolve(xd, x, dwd, nullptr, cd, dyd, dy, algo, workspace, bytes, alpha, beta,
                  Result::W, dw);
}

const char *cudnnGetErrorString(cudnnStatus_t status) {
  return status == CUDNN_STATUS_SUCCESS ? "CUDNN_STATUS_SUCCESS"
                                        : "CUDNN_STATUS_BAD_PARAM (emulated cuDNN)";
}

} // extern "C"
