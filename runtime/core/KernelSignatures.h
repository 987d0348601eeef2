// Kernel signatures: what a step must hold before its kernel may run, so
// that no plan, however it was made, can make a kernel read or write outside
// its buffers. One check per kernel family, named in the kernel traits table;
// the executor runs them on every step before the first run.
#ifndef AMPC_RUNTIME_CORE_KERNELSIGNATURES_H
#define AMPC_RUNTIME_CORE_KERNELSIGNATURES_H

#include <string>

#include "runtime/core/Plan.h"
#include "runtime/core/StepAttrs.h"

namespace ampc::rt {

/// A step with its buffers and decoded attributes, for the checks.
struct StepView {
  const Plan &plan;
  const Step &step;
  const StepAttrs &attrs;
  const Buffer &in(size_t i) const { return plan.buffers[step.inputs[i]]; }
  const Buffer &out(size_t i) const { return plan.buffers[step.outputs[i]]; }
  [[noreturn]] void fail(const std::string &what) const;
  void require(bool ok, const std::string &what) const {
    if (!ok)
      fail(what);
  }
};

using SignatureCheck = void (*)(const StepView &);

namespace signature {
void binary(const StepView &s);
void unary(const StepView &s);
void elementwiseChain(const StepView &s);
void dropout(const StepView &s);
void cast(const StepView &s);
void fill(const StepView &s);
void copy(const StepView &s);
void transpose(const StepView &s);
void concat(const StepView &s);
void slice(const StepView &s);
void sliceBackward(const StepView &s);
void embedding(const StepView &s);
void embeddingBackward(const StepView &s);
void matmul(const StepView &s);
void matmulBias(const StepView &s);
void matmulActGrad(const StepView &s);
void matmulBiasGrad(const StepView &s);
void conv2d(const StepView &s);
void conv2dBackwardInput(const StepView &s);
void conv2dBackwardFilter(const StepView &s);
void pool(const StepView &s);
void globalAvgPool(const StepView &s);
void maxPoolBackward(const StepView &s);
void avgPoolBackward(const StepView &s);
void batchNorm(const StepView &s);
void layerNorm(const StepView &s);
void batchNormBackward(const StepView &s);
void layerNormBackward(const StepView &s);
void reduce(const StepView &s);
void softmax(const StepView &s);
void softmaxBackward(const StepView &s);
void softmaxLogitsBackward(const StepView &s);
void crossEntropy(const StepView &s);
void crossEntropyBackward(const StepView &s);
void mse(const StepView &s);
void mseBackward(const StepView &s);
void attention(const StepView &s);
void attentionBackward(const StepView &s);
void broadcastTo(const StepView &s);
void reduceTo(const StepView &s);
void unaryBackward(const StepView &s);
void minmaxBackward(const StepView &s);
void checkFiniteAndUnscale(const StepView &s);
void checkFinite(const StepView &s);
void checkFiniteNorm(const StepView &s);
void gradNorm(const StepView &s);
void clipScale(const StepView &s);
void allReduce(const StepView &s);
void updateLossScaling(const StepView &s);
void fp8ScaleUpdate(const StepView &s);
void fp8Quantize(const StepView &s);
void fp8Matmul(const StepView &s);
void sgd(const StepView &s);
void momentum(const StepView &s);
void adam(const StepView &s);
void lamb(const StepView &s);
void lion(const StepView &s);
void rmsprop(const StepView &s);
void adagrad(const StepView &s);
void countStep(const StepView &s);
void ema(const StepView &s);
void lrSchedule(const StepView &s);
void assign(const StepView &s);
void restoreIfSkipped(const StepView &s);
void accumulate(const StepView &s);
void increment(const StepView &s);
void recordNonFinite(const StepView &s);
void recordRange(const StepView &s);
void recordScoresRange(const StepView &s);
void recordStep(const StepView &s);
} // namespace signature

/// Whether the step's outputs overlap its inputs or each other only where
/// its kernel allows: exactly, on a kernel that aliases or works in place,
/// or on an earlier list entry, for a list read in order. Throws PlanError.
void checkOverlaps(const StepView &s, unsigned kernelFlags);

} // namespace ampc::rt

#endif
