// softmax_cross_entropy (mean or sum over the rows not ignored, or a loss a row,
// integer labels,
// label smoothing, class weights; runtime/numerics/CrossEntropy.h) and
// mse_loss, and their backward. A row's exponentials use the CPU's
// vectorExp; sums are in double, in a fixed order (the same on every run),
// which differs from the CPU's, so losses agree with the CPU within
// rounding of those sums. A row's max and sum take one read of it (rowExp),
// so the loss reads the logits once and its backward twice; each thread
// loads kUnroll elements of a row before it uses any (unrolledStride), in
// the order it used them one by one.
#include "runtime/cuda/CudaKernels.h"
#include "runtime/numerics/CrossEntropy.h"
#include "runtime/numerics/Exp.h"

namespace ampc::rt::cuda {
namespace {

/// The block's threads' values combined (sum or max), in a fixed order.
template <typename T, typename F> __device__ T blockReduce(T v, F combine) {
  __shared__ T shared[kThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shared[threadIdx.x] = combine(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  T result = shared[0];
  __syncthreads();
  return result;
}

/// A share of a row: its largest value and the sum of exp(x - max) over it.
struct RowShare {
  float max;
  double sum;
};

/// The share with `m` as its max: the sum moved onto the larger one.
__device__ RowShare combineShares(RowShare a, RowShare b) {
  float m = a.max > b.max ? a.max : b.max;
  auto onto = [m](const RowShare &r) { return r.sum == 0 ? 0.0 : r.sum * exp(double(r.max) - m); };
  return {m, onto(a) + onto(b)};
}

/// Row r's max and sum of exp(x - max), by the whole block in one read of
/// the row: each thread keeps its own running max, moving its sum onto a
/// new max as it finds one (an online softmax), and the block combines the
/// threads' shares in a fixed order. Each term is the CPU's vectorExp of
/// x - the thread's max, moved onto the row's max in double, so the sum
/// agrees with the CPU's (every term against the row's max) within a
/// rounding of f32 terms.
__device__ void rowExp(const View &x, int64_t r, int64_t classes, float &max, double &sum) {
  RowShare mine{-INFINITY, 0.0};
  unrolledStride(
      threadIdx.x, classes, blockDim.x,
      [&](int64_t k) { return load(x.data, x.dtype, r * classes + k); },
      [&](int64_t, float v) {
        if (v > mine.max) {
          mine.sum = mine.sum == 0 ? 0.0 : mine.sum * exp(double(mine.max) - v);
          mine.max = v;
        }
        mine.sum += num::vectorExp(v - mine.max);
      });
  RowShare row = blockReduce(mine, combineShares);
  max = row.max;
  sum = row.sum;
}

/// Row r's class under `rule`, or num::kIgnoredRow; a label that is neither
/// reports the error and reads class 0.
__device__ int64_t labelOf(View labels, int64_t r, const num::CrossEntropyRule &rule,
                           int32_t *error, int step) {
  int64_t label = rule.rowLabel(loadIndex(labels.data, labels.dtype, r));
  if (label == num::kBadLabel) {
    reportError(error, step, kLabelOutOfRange);
    return 0;
  }
  return label;
}

/// The sum of row r's logits in double, each times its class weight when
/// `weights` has data (read only with label smoothing).
__device__ double rowSum(const View &x, int64_t r, int64_t classes, const View &weights) {
  double s = 0;
  for (int64_t k = threadIdx.x; k < classes; k += blockDim.x) {
    double v = load(x.data, x.dtype, r * classes + k);
    s += weights.data ? double(load(weights.data, weights.dtype, k)) * v : v;
  }
  return blockReduce(s, [](double a, double b) { return a + b; });
}

/// The sum of the class weights, by the block (read only with smoothing).
__device__ double weightSum(const View &weights) {
  double s = 0;
  for (int64_t k = threadIdx.x; k < weights.size; k += blockDim.x)
    s += load(weights.data, weights.dtype, k);
  return blockReduce(s, [](double a, double b) { return a + b; });
}

/// Class `label`'s weight: 1 without weights.
__device__ double weightOf(const View &weights, int64_t label) {
  return weights.data ? load(weights.data, weights.dtype, label) : 1.0;
}

__global__ void crossEntropyRows(View logits, View labels, View weights,
                                 num::CrossEntropyRule rule, double *rowLoss, int32_t *error,
                                 int step) {
  int64_t classes = rule.classes;
  double total = weights.data && rule.smoothing != 0.0 ? weightSum(weights) : 0.0;
  for (int64_t r = blockIdx.x; r < labels.size; r += gridDim.x) {
    int64_t label = labelOf(labels, r, rule, error, step);
    if (label == num::kIgnoredRow) { // the whole block agrees: one label per row
      if (threadIdx.x == 0)
        rowLoss[r] = 0.0;
      continue;
    }
    float max;
    double sum;
    rowExp(logits, r, classes, max, sum);
    double logitSum = rule.smoothing != 0.0 ? rowSum(logits, r, classes, weights) : 0.0;
    if (threadIdx.x == 0) {
      double lse = log(sum) + max;
      float labelLogit = load(logits.data, logits.dtype, r * classes + label);
      rowLoss[r] = weights.data ? rule.weightedRowLoss(lse, labelLogit, logitSum,
                                                       weightOf(weights, label), total)
                                : rule.rowLoss(lse, labelLogit, logitSum);
    }
  }
}

/// The loss's divisor: for the mean, the counted rows' label weights (1
/// each without weights), by one block in a fixed order (a bad label,
/// reported by the rows' kernel, weighs 0); 1 for the sum.
__device__ double countedRows(View labels, View weights, const num::CrossEntropyRule &rule) {
  if (rule.reduction != num::CrossEntropyRule::Reduction::Mean ||
      (!rule.ignores && !weights.data))
    return rule.divisor(double(labels.size));
  double n = 0; // without weights exact: fewer than 2^53 rows
  for (int64_t r = threadIdx.x; r < labels.size; r += blockDim.x) {
    int64_t label = rule.rowLabel(loadIndex(labels.data, labels.dtype, r));
    n += label >= 0 ? weightOf(weights, label) : 0.0;
  }
  return blockReduce(n, [](double a, double b) { return a + b; });
}

/// The mean of the counted rows' losses, by one block: the losses summed by
/// thread 0 in row order (ignored rows add 0).
__global__ void meanOfRows(const double *rowLoss, View labels, View weights,
                           num::CrossEntropyRule rule, View loss) {
  double counted = countedRows(labels, weights, rule);
  if (threadIdx.x != 0)
    return;
  double total = 0;
  for (int64_t r = 0; r < labels.size; ++r)
    total += rowLoss[r];
  store(loss.data, loss.dtype, 0, float(counted != 0 ? total / counted : 0.0));
}

/// Reduction "none": each row's loss, rounded once to the result's dtype.
__global__ void lossOfRows(const double *rowLoss, View loss) {
  for (int64_t r = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; r < loss.size;
       r += int64_t(gridDim.x) * blockDim.x)
    store(loss.data, loss.dtype, r, float(rowLoss[r]));
}

/// Input `at`'s view, or a view without data when the step has no weights.
View weightsOf(LaunchContext &c, size_t at) {
  return c.in.size() > at ? viewOf(c.in[at]) : View{};
}

void crossEntropy(LaunchContext &c) {
  const TensorRef &logits = c.in[0], &labels = c.in[1];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  num::CrossEntropyRule rule = num::crossEntropyRuleOf(c.attrs, classes);
  View weights = weightsOf(c, 2);
  double *rowLoss = reinterpret_cast<double *>(c.device.scratch(std::max<int64_t>(rows, 1) * 8));
  if (rows)
    crossEntropyRows<<<(unsigned)std::min<int64_t>(rows, 65535), kThreads, 0, c.stream()>>>(
        viewOf(logits), viewOf(labels), weights, rule, rowLoss, c.device.errorWord(), c.index);
  if (rule.perRow() && rows)
    lossOfRows<<<blocksFor(rows), kThreads, 0, c.stream()>>>(rowLoss, viewOf(c.out[0]));
  else if (!rule.perRow())
    meanOfRows<<<1, kThreads, 0, c.stream()>>>(rowLoss, viewOf(labels), weights, rule,
                                               viewOf(c.out[0]));
  launched(c);
}

/// dloss / the mean's divisor, into `factor`, by one block (with an ignored
/// label or class weights: otherwise every row counts, and the rows' kernel
/// divides).
__global__ void crossEntropyFactor(View labels, View weights, View dloss,
                                   num::CrossEntropyRule rule, double *factor) {
  double counted = countedRows(labels, weights, rule);
  if (threadIdx.x == 0)
    *factor = counted != 0 ? load(dloss.data, dloss.dtype, 0) / counted : 0.0;
}

// With one row the result may take the weights' storage (in place): each
// row reads its label's weight and the weights' sum before it writes.
__global__ void crossEntropyBackwardRows(View logits, View labels, View dloss, View weights,
                                         const double *factorOf, View dx,
                                         num::CrossEntropyRule rule, int32_t *error, int step) {
  int64_t rows = labels.size, classes = rule.classes;
  double rowsFactor = rule.perRow() ? 0.0
                     : factorOf      ? *factorOf
                                     : load(dloss.data, dloss.dtype, 0) / rule.divisor(double(rows));
  double total = weights.data && rule.smoothing != 0.0 ? weightSum(weights) : 0.0;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    int64_t label = labelOf(labels, r, rule, error, step);
    if (label == num::kIgnoredRow) {
      for (int64_t k = threadIdx.x; k < classes; k += blockDim.x)
        store(dx.data, dx.dtype, r * classes + k, 0.0f);
      continue;
    }
    double wy = weights.data ? weightOf(weights, label) : 1.0;
    // Reduction "none": the row's own dloss (read before the block writes:
    // with one class the result may take dloss's storage).
    double factor = rule.perRow() ? double(load(dloss.data, dloss.dtype, r)) : rowsFactor;
    float max;
    double sum;
    rowExp(logits, r, classes, max, sum); // synchronises the block: wy is read
    double rowFactor = factor * wy; // without smoothing: (softmax - onehot) w_y
    float inverse = float(rowFactor / sum);
    double inverseSum = 1.0 / sum;
    unrolledStride(
        threadIdx.x, classes, blockDim.x,
        [&](int64_t k) { return load(logits.data, logits.dtype, r * classes + k); },
        [&](int64_t k, float v) {
          float e = num::vectorExp(v - max);
          bool smoothed = rule.smoothing != 0.0;
          float g = smoothed && weights.data
                        ? rule.weightedGradient(e, inverseSum, k == label, weightOf(weights, k),
                                                wy, total, factor)
                    : smoothed   ? rule.smoothedGradient(e, inverseSum, k == label, factor)
                    : k == label ? float((e / sum - 1.0) * rowFactor)
                                 : e * inverse;
          store(dx.data, dx.dtype, r * classes + k, g);
        });
  }
}

void crossEntropyBackward(LaunchContext &c) {
  const TensorRef &logits = c.in[0];
  int64_t classes = logits.dim(-1), rows = classes ? logits.size() / classes : 0;
  if (!rows)
    return;
  num::CrossEntropyRule rule = num::crossEntropyRuleOf(c.attrs, classes);
  View weights = weightsOf(c, 3);
  double *factor = nullptr;
  if (!rule.perRow() && (rule.ignores || weights.data)) {
    factor = reinterpret_cast<double *>(c.device.scratch(sizeof(double)));
    crossEntropyFactor<<<1, kThreads, 0, c.stream()>>>(viewOf(c.in[1]), weights,
                                                       viewOf(c.in[2]), rule, factor);
  }
  crossEntropyBackwardRows<<<(unsigned)std::min<int64_t>(rows, 65535), kThreads, 0,
                             c.stream()>>>(viewOf(logits), viewOf(c.in[1]), viewOf(c.in[2]),
                                           weights, factor, viewOf(c.out[0]), rule,
                                           c.device.errorWord(), c.index);
  launched(c);
}

/// An element of the prediction and of the target.
struct Pair {
  float p, t;
};

/// Blocks of the squared-error sum: a fixed number, so the order (and the
/// bits) of the sum do not depend on anything but the size.
constexpr int kMseBlocks = 264;

/// Block b's share of the sum of squared differences, in double.
__global__ void mseBlocks(View p, View t, double *partial) {
  double s = 0;
  unrolledElements(
      p.size, [&](int64_t i) { return Pair{load(p.data, p.dtype, i), load(t.data, t.dtype, i)}; },
      [&](int64_t, Pair v) {
        double d = double(v.p) - v.t;
        s += d * d;
      });
  double total = blockReduce(s, [](double a, double b) { return a + b; });
  if (threadIdx.x == 0)
    partial[blockIdx.x] = total;
}

__global__ void mseMean(const double *partial, int blocks, int64_t n, View loss) {
  double s = threadIdx.x < blocks ? partial[threadIdx.x] : 0.0;
  for (int b = threadIdx.x + blockDim.x; b < blocks; b += blockDim.x)
    s += partial[b];
  double total = blockReduce(s, [](double a, double b) { return a + b; });
  if (threadIdx.x == 0)
    store(loss.data, loss.dtype, 0, float(n ? total / n : 0.0));
}

void mse(LaunchContext &c) {
  int blocks = (int)std::min<int64_t>(kMseBlocks, blocksFor(c.in[0].size()));
  double *partial = reinterpret_cast<double *>(c.device.scratch(kMseBlocks * sizeof(double)));
  mseBlocks<<<blocks, kThreads, 0, c.stream()>>>(viewOf(c.in[0]), viewOf(c.in[1]), partial);
  mseMean<<<1, kThreads, 0, c.stream()>>>(partial, blocks, c.in[0].size(), viewOf(c.out[0]));
  launched(c);
}

__global__ void mseBackwardKernel(View p, View t, View dloss, View dx) {
  double factor = p.size ? 2.0 * load(dloss.data, dloss.dtype, 0) / double(p.size) : 0.0;
  unrolledElements(
      p.size, [&](int64_t i) { return Pair{load(p.data, p.dtype, i), load(t.data, t.dtype, i)}; },
      [&](int64_t i, Pair v) { store(dx.data, dx.dtype, i, float((double(v.p) - v.t) * factor)); });
}

void mseBackward(LaunchContext &c) {
  mseBackwardKernel<<<blocksForUnrolled(c.in[0].size()), kThreads, 0, c.stream()>>>(
      viewOf(c.in[0]), viewOf(c.in[1]), viewOf(c.in[2]), viewOf(c.out[0]));
  launched(c);
}

} // namespace

void addLossKernels(KernelTable &t) {
  t[Kernel::SoftmaxCrossEntropy] = crossEntropy;
  t[Kernel::SoftmaxCrossEntropyBackward] = crossEntropyBackward;
  t[Kernel::MseLoss] = mse;
  t[Kernel::MseLossBackward] = mseBackward;
}

} // namespace ampc::rt::cuda
