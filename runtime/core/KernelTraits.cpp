#include "runtime/core/KernelTraits.h"

#include "runtime/core/DType.h"

namespace ampc::rt {
namespace {

constexpr Arity kOne{1, 1}, kTwo{2, 2}, kThree{3, 3}, kNone{0, 0}, kAny{0, -1};
constexpr unsigned kBoth = 0b11, kSecond = 0b10;
constexpr IntRange kNoRange{};
using F = FlopRule;
using A = Agreement;
namespace S = signature;

// name, inputs, outputs, flags, widened inputs, FLOPs, integer range, signature,
// agreement with the CPU (Exact when left out)
const std::vector<KernelTraits> kTable = {
    // Matrix work.
    {"matmul", kTwo, kOne, 0, kBoth, F::Matmul, kNoRange, S::matmul, A::Accumulated},
    // matmul + bias [+ relu | tanh GELU] with one rounding (GEMM epilogues);
    // a second result keeps the relu mask or the GELU input for the backward.
    {"matmul_bias", kThree, {1, 2}, 0, 0b111, F::Matmul, kNoRange, S::matmulBias,
     A::Accumulated},
    // The backward epilogues: the activation's derivative and the bias
    // gradient of the GEMM before it; the weight gradient with the bias's.
    {"matmul_act_grad", kThree, kTwo, 0, 0, F::Matmul, kNoRange, S::matmulActGrad,
     A::Accumulated},
    {"matmul_bias_grad", kTwo, kTwo, 0, 0, F::Matmul, kNoRange, S::matmulBiasGrad,
     A::Accumulated},
    {"conv2d", kTwo, kOne, 0, kBoth, F::Conv, kNoRange, S::conv2d, A::Accumulated},
    // Elementwise.
    {"add", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"sub", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"mul", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"div", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"maximum", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"minimum", kTwo, kOne, kInPlace | kMixedFloat, kBoth, F::PerOutput, kNoRange, S::binary},
    {"neg", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"abs", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"scale", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"relu", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"gelu", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {"tanh", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {"sigmoid", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::unary, A::Rounded},
    {"erf", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    // A chain of the elementwise ops above run as one kernel (elementwise chains).
    {"elementwise_chain", {1, 8}, {1, 8}, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::elementwiseChain, A::Rounded},
    {"dropout", {1, 2}, kOne, kInPlace | kReadsIteration, 0, F::PerOutput, kNoRange, S::dropout},
    {"exp", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {"log", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    {"sqrt", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"rsqrt", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"square", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary},
    {"pow", kOne, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange, S::unary, A::Rounded},
    // Precision and constants.
    {"cast", kOne, kOne, kAmpBookkeeping | kConvertsDtype, 0, F::None, kNoRange, S::cast},
    {"fill", kNone, kOne, 0, 0, F::None, kNoRange, S::fill},
    // Data movement.
    {"identity", kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {"reshape", kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {"flatten", kOne, kOne, kAliasesInput | kMovesValues, 0, F::None, kNoRange, S::copy},
    {"transpose", kOne, kOne, kMovesValues, 0, F::None, kNoRange, S::transpose},
    {"concat", {1, -1}, kOne, kMovesValues, 0, F::None, kNoRange, S::concat},
    {"slice", kOne, kOne, kMovesValues, 0, F::None, kNoRange, S::slice},
    {"embedding", kTwo, kOne, 0, 0, F::None, {0, 1, false, 0}, S::embedding},
    // Pooling and normalisation.
    {"max_pool2d", kOne, kOne, 0, 0, F::PerInput, kNoRange, S::pool},
    {"avg_pool2d", kOne, kOne, 0, 0, F::PerInput, kNoRange, S::pool},
    {"global_avg_pool", kOne, kOne, 0, 0, F::PerInput, kNoRange, S::globalAvgPool},
    // batch_norm's sixth input: a residual added before its relu.
    {"batch_norm", {5, 6}, kOne, 0, 0, F::FivePerInput, kNoRange, S::batchNorm, A::Accumulated},
    {"layer_norm", kThree, kOne, kMixedFloat | kRoundedCopy, 0, F::FivePerInput, kNoRange,
     S::layerNorm, A::Rounded},
    // Reductions, softmax and losses.
    {"reduce_sum", kOne, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::reduce},
    {"reduce_mean", kOne, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::reduce},
    {"softmax", kOne, kOne, kMixedFloat | kRoundedCopy, 0, F::FivePerInput, kNoRange, S::softmax,
     A::Accumulated},
    {"log_softmax", kOne, kOne, kMixedFloat, 0, F::FivePerInput, kNoRange,
     S::softmax, A::Accumulated},
    {"softmax_cross_entropy",
     kTwo,
     kOne,
     kMixedFloat,
     0,
     F::FivePerInput,
     {1, 0, false, -1},
     S::crossEntropy,
     A::Accumulated},
    {"mse_loss", kTwo, kOne, kMixedFloat, 0, F::PerInput, kNoRange, S::mse, A::Accumulated},
    // Backward.
    {"broadcast_to", kOne, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::broadcastTo},
    {"reduce_to", kOne, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::reduceTo, A::Rounded},
    {"unary_backward", kThree, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::unaryBackward,
     A::Rounded},
    {"minmax_backward", kThree, kTwo, 0, 0, F::PerOutput, kNoRange, S::minmaxBackward},
    {"conv2d_backward_input", kTwo, kOne, 0, kSecond, F::PerOutput, kNoRange,
     S::conv2dBackwardInput,
     A::Accumulated},
    {"conv2d_backward_filter", kTwo, kOne, 0, 0, F::PerOutput, kNoRange, S::conv2dBackwardFilter,
     A::Accumulated},
    {"max_pool2d_backward", kTwo, kOne, 0, 0, F::PerOutput, kNoRange, S::maxPoolBackward},
    {"avg_pool2d_backward", kOne, kOne, 0, 0, F::PerOutput, kNoRange, S::avgPoolBackward},
    // batch_norm_backward's fourth input: the relu's result, masking dy.
    {"batch_norm_backward", {3, 4}, kThree, 0, 0, F::PerOutput, kNoRange, S::batchNormBackward,
     A::Accumulated},
    // layer_norm_backward's fourth input: dy's second addend (a residual
    // gradient's sum joined).
    {"layer_norm_backward", {3, 4}, kThree, kMixedFloat | kRoundedCopy, 0, F::PerOutput,
     kNoRange, S::layerNormBackward, A::Rounded},
    {"softmax_backward", kTwo, kOne, kInPlace | kMixedFloat, 0, F::PerOutput, kNoRange,
     S::softmaxBackward,
     A::Accumulated},
    {"softmax_cross_entropy_backward",
     kThree,
     kOne,
     kInPlace | kMixedFloat,
     0,
     F::PerOutput,
     {1, 0, false, -1},
     S::crossEntropyBackward,
     A::Accumulated},
    {"mse_loss_backward", kThree, kOne, kMixedFloat, 0, F::PerOutput, kNoRange, S::mseBackward},
    {"embedding_backward", kTwo, kOne, 0, 0, F::PerOutput, {0, 0, true, 0}, S::embeddingBackward},
    {"slice_backward", kOne, kOne, kMovesValues, 0, F::PerOutput, kNoRange, S::sliceBackward},
    // Loss scaling and updates: no results, they write their first operands.
    {"check_finite_and_unscale",
     {1, -1},
     {1, -1},
     kInOrderList | kOutputPerInput | kAmpBookkeeping | kFlagsNonFinite,
     0,
     F::PerOutput,
     kNoRange,
     S::checkFiniteAndUnscale},
    {"all_reduce",
     {1, -1},
     {1, -1},
     kInPlace | kOutputPerInput | kPacksList,
     0,
     F::None,
     kNoRange,
     S::allReduce},
    {"check_finite", kAny, kOne, kAmpBookkeeping | kFlagsNonFinite, 0, F::PerOutput, kNoRange,
     S::checkFinite},
    {"update_loss_scaling",
     {4, 4},
     kNone,
     kAmpBookkeeping,
     0,
     F::PerOutput,
     kNoRange,
     S::updateLossScaling},
    {"sgd", {4, 6}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::sgd},
    {"momentum", {5, 7}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::momentum},
    {"adam", {7, 9}, kNone, kOptimizerUpdate, 0, F::PerOutput, kNoRange, S::adam, A::Rounded},
    {"count_step", kTwo, kNone, 0, 0, F::PerOutput, kNoRange, S::countStep},
    {"assign", kTwo, kNone, 0, 0, F::PerOutput, kNoRange, S::assign},
    {"restore_if_skipped", kThree, kNone, 0, 0, F::PerOutput, kNoRange, S::restoreIfSkipped},
    {"accumulate", kTwo, kNone, 0, 0, F::PerOutput, kNoRange, S::accumulate},
    // The plan's own counters (added by the lowering): counter += 1, or
    // += flag with a second input.
    {"increment", {1, 2}, kNone, 0, 0, F::None, kNoRange, S::increment},
    // Numerics probes (runtime/core/Probes.h): they write their last or
    // second operand, a state buffer.
    {"record_non_finite", {2, -1}, kNone, 0, 0, F::None, kNoRange, S::recordNonFinite},
    {"record_range", {2, 3}, kNone, 0, 0, F::None, kNoRange, S::recordRange},
};

} // namespace

const std::vector<KernelTraits> &allKernelTraits() { return kTable; }

const KernelTraits *findKernelTraits(const std::string &name) {
  for (const KernelTraits &t : kTable)
    if (name == t.name)
      return &t;
  return nullptr;
}

double kernelFlops(const KernelTraits &traits, const std::vector<std::vector<int64_t>> &inputs,
                   const std::vector<std::vector<int64_t>> &outputs, bool transposeA) {
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
    int64_t k = transposeA ? a.end()[-2] : a.back();
    return 2.0 * numel(outputs[0]) * k;
  }
  case FlopRule::Conv: {
    const std::vector<int64_t> &w = inputs[1];
    return 2.0 * numel(outputs[0]) * (numElements(w) / w[0]);
  }
  }
  return 0;
}

} // namespace ampc::rt
