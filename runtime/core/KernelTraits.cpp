#include "runtime/core/KernelTraits.h"

#include "runtime/core/DType.h"

namespace ampc::rt {
namespace {

constexpr Arity kOne{1, 1}, kTwo{2, 2}, kThree{3, 3}, kNone{0, 0}, kAny{0, -1};
constexpr unsigned kBoth = 0b11, kSecond = 0b10;
constexpr IntRange kNoRange{};
using F = FlopRule;
using A = Agreement;
using K = Kernel;
namespace S = signature;

// kernel, inputs, outputs, flags, widened inputs, FLOPs, integer range, signature,
// agreement with the CPU (Exact when left out)
constexpr KernelTraits kRows[] = {
    // Matrix work.
    {K::Matmul, kTwo, kOne, 0, kBoth, F::Matmul, kNoRange, S::matmul, A::Accumulated},
    // matmul + bias [+ relu | tanh GELU] with one rounding (GEMM epilogues);
    // a second result keeps the relu mask or the GELU input for the backward.
    {K::MatmulBias, kThree, {1, 2}, kMayKeepReluMask, 0b111, F::Matmul, kNoRange, S::matmulBias,
     A::Accumulated},
    // The backward epilogues: the activation's derivative and the bias
    // gradient of the GEMM before it; the weight gradient with the bias's.
    {K::MatmulActGrad, kThree, kTwo, 0, 0, F::Matmul, kNoRange, S::matmulActGrad,
     A::Accumulated, {0, true}},
    {K::MatmulBiasGrad, kTwo, kTwo, 0, 0, F::Matmul, kNoRange, S::matmulBiasGrad,
     A::Accumulated, {1, false}},
    // FP8: an operand quantized with its delayed scale (and its amax), and
    // the GEMM of two such operands scaled back.
    {K::Fp8Quantize, kTwo, kTwo, kAmpBookkeeping, 0, F::None, kNoRange, S::fp8Quantize},
    {K::Fp8Matmul, {4, 4}, kOne, 0, 0, F::Matmul, kNoRange, S::fp8Matmul, A::Accumulated},
    {K::Conv2d, kTwo, kOne, 0, kBoth, F::Conv, kNoRange, S::conv2d, A::Accumulated},
    // Elementwise.
    {K::Add, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Sub, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Mul, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Div, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Maximum, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Minimum, kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {K::Neg, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Abs, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Scale, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Relu, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Gelu, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Tanh, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {K::Sigmoid, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Erf, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    // A chain of the elementwise ops above run as one kernel (elementwise chains).
    {K::ElementwiseChain, {1, 8}, {1, 8}, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::elementwiseChain, A::Rounded},
    {K::Dropout, {1, 2}, kOne, kInPlace | kReadsIteration, 0, F::PerOutput, kNoRange, S::dropout},
    {K::Exp, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {K::Log, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {K::Sqrt, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Rsqrt, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Square, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {K::Pow, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {K::Sin, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {K::Cos, kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    // Precision and constants.
    {K::Cast, kOne, kOne, kAmpBookkeeping | kConvertsDtype, 0, F::None, kNoRange, S::cast},
    {K::Fill, kNone, kOne, 0, 0, F::None, kNoRange, S::fill},
    // Data movement.
    {K::Identity, kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {K::Reshape, kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {K::Flatten, kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {K::Transpose, kOne, kOne, kMovesValues, 0, F::None, kNoRange, S::transpose},
    {K::Concat, {1, -1}, kOne, kMovesValues, 0, F::None, kNoRange, S::concat},
    {K::Slice, kOne, kOne, kMovesValues, 0, F::None, kNoRange, S::slice},
    {K::Embedding, kTwo, kOne, 0, 0, F::None, {0, 1, false, 0}, S::embedding},
    // Pooling and normalisation.
    {K::MaxPool2d, kOne, kOne, 0, 0, F::PerInput, kNoRange, S::pool},
    {K::AvgPool2d, kOne, kOne, 0, 0, F::PerInput, kNoRange, S::pool},
    {K::GlobalAvgPool, kOne, kOne, 0, 0, F::PerInput, kNoRange, S::globalAvgPool},
    // batch_norm's sixth input: a residual added before its relu.
    {K::BatchNorm, {5, 6}, kOne, 0, 0, F::FivePerInput, kNoRange, S::batchNorm, A::Accumulated},
    {K::LayerNorm, kThree, kOne, kMixedFloat | kRoundedCopy, 0, F::FivePerInput, kNoRange,
     S::layerNorm, A::Rounded},
    // Reductions, softmax and losses.
    {K::ReduceSum, kOne, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::reduce},
    {K::ReduceMean, kOne, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::reduce},
    {K::Softmax, kOne, kOne, kMixedFloat | kRoundedCopy, 0, F::FivePerInput, kNoRange, S::softmax,
     A::Accumulated},
    {K::LogSoftmax, kOne, kOne, kMixedFloat, 0, F::FivePerInput, kNoRange,
     S::softmax, A::Accumulated},
    // logits, labels[, class weights].
    {K::SoftmaxCrossEntropy,
     {2, 3},
     kOne,
     kMixedFloat,
     0,
     F::FivePerInput,
     {1, 0, false, -1},
     S::crossEntropy,
     A::Accumulated},
    {K::MseLoss, kTwo, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::mse, A::Accumulated},
    // Fused attention (docs/runtime.md, "Attention"): sums in another
    // order on another backend, exp, and on tensor cores probabilities
    // rounded to the operands' dtype (the attention agreement). A second result keeps each row's
    // log-sum-exp for the backward, which then reads it (attention-lse).
    // q, k, v[, bias][, the run counter, with `dropout`].
    {K::Attention, {3, 5}, {1, 2}, kReadsIteration, 0, F::Attention, kNoRange, S::attention,
     A::Attention, {}, "dropout"},
    // Backward.
    {K::BroadcastTo, kOne, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::broadcastTo},
    {K::ReduceTo, kOne, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::reduceTo, A::Rounded},
    {K::UnaryBackward, kThree, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::unaryBackward,
     A::Rounded},
    {K::MinmaxBackward, kThree, kTwo, 0, 0, F::PerOutput, kNoRange, S::minmaxBackward},
    {K::Conv2dBackwardInput, kTwo, kOne, 0, kSecond, F::ConvBackwardInput, kNoRange,
     S::conv2dBackwardInput,
     A::Accumulated},
    {K::Conv2dBackwardFilter, kTwo, kOne, 0, 0, F::ConvBackwardFilter, kNoRange,
     S::conv2dBackwardFilter,
     A::Accumulated},
    {K::MaxPool2dBackward, kTwo, kOne, 0, 0, F::PerOutput, kNoRange, S::maxPoolBackward},
    {K::AvgPool2dBackward, kOne, kOne, 0, 0, F::PerOutput, kNoRange, S::avgPoolBackward},
    // batch_norm_backward's fourth input: the relu's result, masking dy.
    {K::BatchNormBackward, {3, 4}, kThree, 0, 0, F::PerOutput, kNoRange, S::batchNormBackward,
     A::Accumulated},
    // layer_norm_backward's fourth input: dy's second addend (a residual
    // gradient's sum joined).
    {K::LayerNormBackward, {3, 4}, kThree, kMixedFloat | kRoundedCopy, 0, F::PerOutput,
     kNoRange, S::layerNormBackward, A::Rounded},
    {K::SoftmaxBackward, kTwo, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::softmaxBackward,
     A::Accumulated},
    // softmax_backward from the softmax's operand (its logits, with its
    // input scale) instead of its result: each probability is recomputed
    // as the softmax computed it (docs/runtime.md, "Softmax backward from
    // logits").
    {K::SoftmaxLogitsBackward, kTwo, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::softmaxLogitsBackward, A::Accumulated},
    // attention's gradient: q, k, v, y, dy -> dq, dk, dv, the scores
    // recomputed from q and k.
    // q, k, v, y, dy[, bias][, the forward's log-sum-exp][, the run counter].
    {K::AttentionBackward, {5, 8}, kThree, kReadsIteration, 0, F::AttentionBackward, kNoRange,
     S::attentionBackward, A::Attention, {}, "dropout"},
    // logits, labels, dloss[, class weights].
    {K::SoftmaxCrossEntropyBackward,
     {3, 4},
     kOne,
     kInPlace | kMixedFloat,
     0,
     F::PerOutput,
     {1, 0, false, -1},
     S::crossEntropyBackward,
     A::Accumulated},
    {K::MseLossBackward, kThree, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::mseBackward},
    {K::EmbeddingBackward, kTwo, kOne, 0, 0, F::PerOutput, {0, 0, true, 0}, S::embeddingBackward},
    {K::SliceBackward, kOne, kOne, kMovesValues, 0, F::PerOutput, kNoRange, S::sliceBackward},
    // Loss scaling and updates: no results, they write their first operands.
    {K::CheckFiniteAndUnscale,
     {1, -1},
     {1, -1},
     kInOrderList | kOutputPerInput | kAmpBookkeeping | kFlagsNonFinite,
     0,
     F::PerOutput,
     kNoRange,
     S::checkFiniteAndUnscale},
    {K::AllReduce,
     {1, -1},
     {1, -1},
     kInPlace | kOutputPerInput | kPacksList,
     0,
     F::None,
     kNoRange,
     S::allReduce},
    {K::CheckFinite, kAny, kOne, kAmpBookkeeping | kFlagsNonFinite, 0, F::PerOutput, kNoRange,
     S::checkFinite},
    // Gradient clipping (docs/training.md): the unscaled gradients' global
    // norm [scale, grads...] -> norm, in the finite check's pass
    // (check_finite_norm: -> norm, found_inf) or alone; and the grad_scale
    // the updates divide by with the clipping factor folded in.
    {K::CheckFiniteNorm, {2, -1}, kTwo, kAmpBookkeeping | kFlagsNonFinite, 0, F::PerInput,
     kNoRange, S::checkFiniteNorm, A::Accumulated},
    {K::GradNorm, {2, -1}, kOne, 0, 0, F::PerInput, kNoRange, S::gradNorm, A::Accumulated},
    {K::ClipScale, kTwo, kOne, 0, 0, F::None, kNoRange, S::clipScale},
    {K::UpdateLossScaling,
     {4, 4},
     kNone,
     kAmpBookkeeping,
     0,
     F::PerOutput,
     kNoRange,
     S::updateLossScaling},
    {K::Fp8ScaleUpdate, {4, 4}, kNone, kAmpBookkeeping, 0, F::None, kNoRange,
     S::fp8ScaleUpdate},
    {K::Sgd, {4, 6}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::sgd},
    {K::Momentum, {5, 7}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::momentum},
    {K::Adam, {7, 9}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::adam, A::Rounded},
    // LAMB's trust ratio divides two norms summed over the tensor.
    {K::Lamb, {7, 9}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::lamb,
     A::Accumulated},
    {K::Lion, {5, 7}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::lion},
    // rmsprop's inputs 5 and 6: a momentum buffer and the gradient's average.
    {K::Rmsprop, {5, 9}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::rmsprop},
    {K::Adagrad, {5, 7}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::adagrad},
    // count_step's second input: found_inf (without it, every step counts).
    {K::CountStep, {1, 2}, kNone, 0, 0, F::PerOutput, kNoRange, S::countStep},
    // ema's fourth input: the applied steps, for its warmup.
    {K::Ema, {3, 4}, kNone, 0, 0, F::PerOutput, kNoRange, S::ema},
    // The learning rate of a step under a schedule: peak, step, total -> lr.
    {K::LrSchedule, kThree, kOne, 0, 0, F::None, kNoRange, S::lrSchedule, A::Rounded},
    {K::Assign, kTwo, kNone, 0, 0, F::PerOutput, kNoRange, S::assign},
    {K::RestoreIfSkipped, kThree, kNone, 0, 0, F::PerOutput, kNoRange, S::restoreIfSkipped},
    {K::Accumulate, kTwo, kNone, 0, 0, F::PerOutput, kNoRange, S::accumulate},
    // The plan's own counters (added by the lowering): counter += 1, or
    // += flag with a second input.
    {K::Increment, {1, 2}, kNone, 0, 0, F::None, kNoRange, S::increment},
    // Numerics probes (runtime/core/Probes.h): they write their last or
    // second operand, a state buffer.
    {K::RecordNonFinite, {2, -1}, kNone, 0, 0, F::None, kNoRange, S::recordNonFinite},
    {K::RecordRange, {2, 3}, kNone, 0, 0, F::None, kNoRange, S::recordRange},
    // An attention's scores q k^T scale, computed and recorded as a range
    // row (in place of a value the fused op never stores).
    {K::RecordScoresRange, kThree, kNone, 0, 0, F::None, kNoRange, S::recordScoresRange,
     A::Accumulated},
    // The training history (runtime/core/History.h): it writes its first
    // two operands, state buffers.
    {K::RecordStep, {5, 7}, kNone, 0, 0, F::None, kNoRange, S::recordStep},
};

/// Row i is kernel i's: Kernels.def and this table list them alike.
constexpr bool rowsInKernelOrder() {
  size_t i = 0;
  for (const KernelTraits &t : kRows)
    if (static_cast<size_t>(t.kernel) != i++)
      return false;
  return i == kKernelCount;
}
static_assert(rowsInKernelOrder(), "kRows must list the kernels of Kernels.def, in its order");

const std::vector<KernelTraits> kTable(std::begin(kRows), std::end(kRows));

} // namespace

const std::vector<KernelTraits> &allKernelTraits() { return kTable; }

const KernelTraits &traitsOf(Kernel kernel) { return kRows[static_cast<size_t>(kernel)]; }

bool readsIteration(const Step &step) {
  const KernelTraits &t = traitsOf(step.kernel);
  return t.has(kReadsIteration) &&
         (!t.randomRate || step.attrs.value(t.randomRate, 0.0) != 0.0);
}

const KernelTraits *findKernelTraits(std::string_view name) {
  std::optional<Kernel> k = kernelNamed(name);
  return k ? &traitsOf(*k) : nullptr;
}

double kernelFlops(const KernelTraits &traits, const std::vector<std::vector<int64_t>> &inputs,
                   const std::vector<std::vector<int64_t>> &outputs, FlopAttrs attrs) {
  auto numel = [](const std::vector<int64_t> &shape) { return (double)numElements(shape); };
  switch (traits.flops) {
  case FlopRule::None:
    return 0;
  case FlopRule::PerOutput:
    return outputs.empty() ? 0 : numel(outputs[0]);
  case FlopRule::PerInput:
    return inputs.empty() ? 0 : numel(inputs[0]);
  case FlopRule::FivePerInput:
    return inputs.empty() ? 0 : 5.0 * numel(inputs[0]);
  case FlopRule::Matmul: {
    const std::vector<int64_t> &a = inputs[0];
    int64_t k = attrs.transposeA ? a.end()[-2] : a.back();
    return 2.0 * numel(outputs[0]) * k;
  }
  case FlopRule::Conv: { // each a multiply-add per output element and filter tap
    const std::vector<int64_t> &w = inputs[1];
    return 2.0 * numel(outputs[0]) * (numElements(w) / w[0]);
  }
  case FlopRule::ConvBackwardInput: { // (dy, filter) -> dx: the forward's products
    const std::vector<int64_t> &w = inputs[1];
    return 2.0 * numel(inputs[0]) * (numElements(w) / w[0]);
  }
  case FlopRule::ConvBackwardFilter: { // (x, dy) -> dfilter: the forward's products
    const std::vector<int64_t> &w = outputs[0];
    return 2.0 * numel(inputs[1]) * (numElements(w) / w[0]);
  }
  case FlopRule::Attention:
  case FlopRule::AttentionBackward: {
    // q [b, sq, h, d], k [b, sk, h, d], v [b, sk, h, dv]: 2 (d + dv) per
    // (query, key) pair forward; the backward's five products 2 (3 d + 2 dv).
    // Causal: query i sees min(i + 1, sk) keys.
    const std::vector<int64_t> &q = inputs[0], &k = inputs[1], &v = inputs[2];
    double sq = double(q[1]), sk = double(k[1]), seen = sq * sk;
    if (attrs.causal)
      seen = sq <= sk ? sq * (sq + 1) / 2 : sk * (sk + 1) / 2 + (sq - sk) * sk;
    double pairs = double(q[0]) * q[2] * seen;
    return traits.flops == FlopRule::Attention ? 2.0 * pairs * (q[3] + v[3])
                                               : 2.0 * pairs * (3.0 * q[3] + 2.0 * v[3]);
  }
  }
  return 0;
}

} // namespace ampc::rt

namespace ampc::rt {

void checkStepContract(const Plan &plan, const Step &s) {
  const KernelTraits &traits = traitsOf(s.kernel);
  bool copy = hasRoundedCopy(s);
  if (!traits.inputs.allows(s.inputs.size()) ||
      !traits.outputs.allows(s.outputs.size() - (copy ? 1 : 0)) ||
      (traits.has(kOutputPerInput) && s.inputs.size() != s.outputs.size()))
    throw PlanError("step '" + s.name + "': kernel '" + traits.name() + "' cannot take " +
                    std::to_string(s.inputs.size()) + " inputs and " +
                    std::to_string(s.outputs.size()) + " outputs");
  StepAttrs attrs(s);
  StepView view{plan, s, attrs};
  if (copy) {
    const Buffer &y = view.out(0), &low = plan.buffers[s.outputs.back()];
    view.require(y.dtype == DType::F32 && (low.dtype == DType::F16 || low.dtype == DType::BF16) &&
                     low.shape == y.shape,
                 "a rounded copy is an f16 or bf16 tensor of an f32 result's shape");
  }
  traits.check(view);
  checkOverlaps(view, traits.flags);
}

} // namespace ampc::rt
