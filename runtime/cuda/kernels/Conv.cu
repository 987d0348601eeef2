// conv2d and its backward (data and filter) through cuDNN 9, NHWC or NCHW,
// f16/bf16 with f32 compute on tensor cores, f32 without TF32. The algorithm
// is chosen once per step by cuDNN's heuristics, among the deterministic
// ones (exact resume depends on it), with the device's scratch as workspace.
#include "runtime/cuda/CudaKernels.h"

namespace ampc::rt::cuda {
namespace {

void checkDnn(cudnnStatus_t status, const char *what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw RuntimeError(std::string("cuda: cuDNN ") + what + ": " + cudnnGetErrorString(status));
}

enum class Pass { Forward, Data, Filter };

/// The descriptors of one convolution step and its chosen algorithm.
struct Conv {
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  int algo = 0;
  size_t workspace = 0;
  ~Conv() {
    cudnnDestroyTensorDescriptor(x);
    cudnnDestroyTensorDescriptor(y);
    cudnnDestroyFilterDescriptor(w);
    cudnnDestroyConvolutionDescriptor(conv);
  }
};

cudnnDataType_t dnnType(const LaunchContext &c, DType t) {
  switch (t) {
  case DType::F32: return CUDNN_DATA_FLOAT;
  case DType::F16: return CUDNN_DATA_HALF;
  case DType::BF16: return CUDNN_DATA_BFLOAT16;
  default: c.fail(std::string("conv2d of ") + dtypeName(t) + " is not supported on cuda");
  }
}

/// The descriptors for input x, filter w and output y (in the op's layout).
std::shared_ptr<Conv> describe(LaunchContext &c, const TensorRef &x, const TensorRef &w,
                               const TensorRef &y, Pass pass) {
  bool nhwc = c.attrs.getStr("layout", "NHWC") == "NHWC";
  std::vector<int64_t> st = c.attrs.getInts("strides", {1, 1}),
                       di = c.attrs.getInts("dilations", {1, 1}),
                       pad = c.attrs.getInts("padding", {0, 0});
  if (pad.size() == 4 && (pad[0] != pad[1] || pad[2] != pad[3]))
    c.fail("asymmetric padding is not supported on cuda yet");
  int64_t ph = pad[0], pw = pad.size() == 4 ? pad[2] : pad[1];
  if (x.dtype != w.dtype || x.dtype != y.dtype)
    c.fail("operands and result need one dtype on cuda");
  cudnnDataType_t type = dnnType(c, x.dtype);
  cudnnTensorFormat_t format = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  auto dims = [&](const TensorRef &t) {
    return std::array<int, 4>{(int)t.dim(0), (int)(nhwc ? t.dim(3) : t.dim(1)),
                              (int)(nhwc ? t.dim(1) : t.dim(2)),
                              (int)(nhwc ? t.dim(2) : t.dim(3))};
  };
  auto conv = std::make_shared<Conv>();
  auto [n, ci, h, wd] = dims(x);
  auto [yn, co, oh, ow] = dims(y);
  int kh = (int)(nhwc ? w.dim(1) : w.dim(2)), kw = (int)(nhwc ? w.dim(2) : w.dim(3)),
      cg = (int)(nhwc ? w.dim(3) : w.dim(1));
  checkDnn(cudnnCreateTensorDescriptor(&conv->x), "descriptor");
  checkDnn(cudnnCreateTensorDescriptor(&conv->y), "descriptor");
  checkDnn(cudnnCreateFilterDescriptor(&conv->w), "descriptor");
  checkDnn(cudnnCreateConvolutionDescriptor(&conv->conv), "descriptor");
  checkDnn(cudnnSetTensor4dDescriptor(conv->x, format, type, n, ci, h, wd), "input");
  checkDnn(cudnnSetTensor4dDescriptor(conv->y, format, type, yn, co, oh, ow), "output");
  checkDnn(cudnnSetFilter4dDescriptor(conv->w, type, format, (int)w.dim(0), cg, kh, kw), "filter");
  checkDnn(cudnnSetConvolution2dDescriptor(conv->conv, (int)ph, (int)pw, (int)st[0], (int)st[1],
                                           (int)di[0], (int)di[1], CUDNN_CROSS_CORRELATION,
                                           CUDNN_DATA_FLOAT),
           "convolution");
  checkDnn(cudnnSetConvolutionGroupCount(conv->conv, (int)c.attrs.getInt("groups", 1)), "groups");
  // f32 stays f32 (no TF32); f16/bf16 use tensor cores, accumulating in f32.
  checkDnn(cudnnSetConvolutionMathType(conv->conv, x.dtype == DType::F32
                                                       ? CUDNN_FMA_MATH
                                                       : CUDNN_TENSOR_OP_MATH),
           "math type");
  int outN, outC, outH, outW;
  checkDnn(cudnnGetConvolution2dForwardOutputDim(conv->conv, conv->x, conv->w, &outN, &outC,
                                                 &outH, &outW),
           "output size");
  if (outN != yn || outC != co || outH != oh || outW != ow)
    c.fail("the output's shape is not cuDNN's for this convolution");
  cudnnHandle_t dnn = c.device.dnn();
  constexpr int kCandidates = 8;
  int found = 0;
  auto choose = [&](auto &results) {
    for (int i = 0; i < found; ++i)
      if (results[i].status == CUDNN_STATUS_SUCCESS &&
          results[i].determinism == CUDNN_DETERMINISTIC) {
        conv->algo = (int)results[i].algo;
        conv->workspace = results[i].memory;
        return;
      }
    c.fail("cuDNN has no deterministic algorithm for this convolution");
  };
  if (pass == Pass::Forward) {
    cudnnConvolutionFwdAlgoPerf_t results[kCandidates];
    checkDnn(cudnnGetConvolutionForwardAlgorithm_v7(dnn, conv->x, conv->w, conv->conv, conv->y,
                                                    kCandidates, &found, results),
             "algorithm");
    choose(results);
  } else if (pass == Pass::Data) {
    cudnnConvolutionBwdDataAlgoPerf_t results[kCandidates];
    checkDnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(dnn, conv->w, conv->y, conv->conv,
                                                         conv->x, kCandidates, &found, results),
             "algorithm");
    choose(results);
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t results[kCandidates];
    checkDnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(dnn, conv->x, conv->y, conv->conv,
                                                           conv->w, kCandidates, &found, results),
             "algorithm");
    choose(results);
  }
  return conv;
}

Conv &convOf(LaunchContext &c, const TensorRef &x, const TensorRef &w, const TensorRef &y,
             Pass pass) {
  if (!c.cache)
    c.cache = describe(c, x, w, y, pass);
  return *std::static_pointer_cast<Conv>(c.cache);
}

void forward(LaunchContext &c) {
  const TensorRef &x = c.in[0], &w = c.in[1], &y = c.out[0];
  if (y.size() == 0)
    return;
  Conv &conv = convOf(c, x, w, y, Pass::Forward);
  float one = 1.0f, zero = 0.0f;
  checkDnn(cudnnConvolutionForward(c.device.dnn(), &one, conv.x, x.data, conv.w, w.data,
                                   conv.conv, (cudnnConvolutionFwdAlgo_t)conv.algo,
                                   c.device.scratch(conv.workspace), conv.workspace, &zero,
                                   conv.y, y.data),
           "forward");
}

void backwardData(LaunchContext &c) {
  const TensorRef &dy = c.in[0], &w = c.in[1], &dx = c.out[0];
  if (dx.size() == 0)
    return;
  Conv &conv = convOf(c, dx, w, dy, Pass::Data);
  float one = 1.0f, zero = 0.0f;
  checkDnn(cudnnConvolutionBackwardData(c.device.dnn(), &one, conv.w, w.data, conv.y, dy.data,
                                        conv.conv, (cudnnConvolutionBwdDataAlgo_t)conv.algo,
                                        c.device.scratch(conv.workspace), conv.workspace, &zero,
                                        conv.x, dx.data),
           "backward data");
}

void backwardFilter(LaunchContext &c) {
  const TensorRef &x = c.in[0], &dy = c.in[1], &dw = c.out[0];
  if (dw.size() == 0)
    return;
  Conv &conv = convOf(c, x, dw, dy, Pass::Filter);
  float one = 1.0f, zero = 0.0f;
  checkDnn(cudnnConvolutionBackwardFilter(c.device.dnn(), &one, conv.x, x.data, conv.y, dy.data,
                                          conv.conv, (cudnnConvolutionBwdFilterAlgo_t)conv.algo,
                                          c.device.scratch(conv.workspace), conv.workspace,
                                          &zero, conv.w, dw.data),
           "backward filter");
}

} // namespace

void addConvKernels(KernelTable &t) {
  t[Kernel::Conv2d] = forward;
  t[Kernel::Conv2dBackwardInput] = backwardData;
  t[Kernel::Conv2dBackwardFilter] = backwardFilter;
}

} // namespace ampc::rt::cuda
