// Type inference (and so verification) of the backward ops, and verifiers of
// the training updates.
#include "ops/InferenceUtils.h"
#include "runtime/numerics/LrSchedule.h"

using namespace mlir;

namespace ampc::graph {
using namespace infer;

namespace {

LogicalResult shapedLike(Location loc, StringRef op, ArrayRef<int64_t> shape, Value like,
                         SmallVectorImpl<Type> &types) {
  for (int64_t d : shape)
    if (d < 0)
      return opError(loc, op) << "shape " << shapeString(shape) << " has a negative dimension";
  types.push_back(RankedTensorType::get(shape, elementType(like.getType())));
  return success();
}

bool isScalar(Value v) { return cast<RankedTensorType>(v.getType()).getRank() == 0; }

} // namespace

LogicalResult BroadcastToOp::inferTypes(Location loc, Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> out;
  if (!broadcastShapes(ranked(adaptor.getX()).getShape(), adaptor.getShape(), out) ||
      ArrayRef<int64_t>(out) != adaptor.getShape())
    return opError<BroadcastToOp>(loc) << "cannot broadcast "
                                       << shapeString(ranked(adaptor.getX()).getShape())
                                       << " to " << shapeString(adaptor.getShape());
  return shapedLike(loc, getOperationName(), adaptor.getShape(), adaptor.getX(), types);
}

LogicalResult ReduceToOp::inferTypes(Location loc, Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  SmallVector<int64_t> out;
  ArrayRef<int64_t> from = ranked(adaptor.getX()).getShape();
  if (!broadcastShapes(adaptor.getShape(), from, out) || ArrayRef<int64_t>(out) != from)
    return opError<ReduceToOp>(loc) << shapeString(adaptor.getShape())
                                    << " does not broadcast to " << shapeString(from);
  return shapedLike(loc, getOperationName(), adaptor.getShape(), adaptor.getX(), types);
}

LogicalResult UnaryBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  static const StringRef fns[] = {"relu", "gelu", "gelu_tanh", "tanh", "sigmoid", "erf", "abs",
                                  "exp",  "log",  "sqrt",      "rsqrt", "square", "pow",
                                  "sin",  "cos"};
  if (!llvm::is_contained(fns, adaptor.getFn()))
    return opError<UnaryBackwardOp>(loc) << "unknown function '" << adaptor.getFn() << "'";
  Type dy = adaptor.getDy().getType();
  if (adaptor.getX().getType() != dy || adaptor.getY().getType() != dy)
    return opError<UnaryBackwardOp>(loc) << "x, y and dy must have one type";
  types.push_back(dy);
  return success();
}

LogicalResult MinMaxBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  if (adaptor.getFn() != "max" && adaptor.getFn() != "min")
    return opError<MinMaxBackwardOp>(loc) << "fn must be max or min";
  SmallVector<Type> shape;
  if (failed(inferBroadcast(loc, adaptor.getA().getType(), adaptor.getB().getType(), shape)))
    return failure();
  if (shape[0] != adaptor.getDy().getType())
    return opError<MinMaxBackwardOp>(loc) << "dy must have the broadcast shape";
  types.append({shape[0], shape[0]});
  return success();
}

LogicalResult Conv2dBackwardInputOp::inferTypes(Location loc, Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  if (failed(sameDtype(loc, getOperationName(), adaptor.getDy().getType(),
                       adaptor.getFilter().getType())))
    return failure();
  return shapedLike(loc, getOperationName(), adaptor.getInputShape(), adaptor.getDy(), types);
}

LogicalResult Conv2dBackwardFilterOp::inferTypes(Location loc, Adaptor adaptor,
                                                 SmallVectorImpl<Type> &types) {
  if (failed(sameDtype(loc, getOperationName(), adaptor.getDy().getType(),
                       adaptor.getX().getType())))
    return failure();
  return shapedLike(loc, getOperationName(), adaptor.getFilterShape(), adaptor.getDy(), types);
}

LogicalResult MaxPool2dBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  if (failed(sameDtype(loc, getOperationName(), adaptor.getDy().getType(),
                       adaptor.getX().getType())))
    return failure();
  types.push_back(adaptor.getX().getType());
  return success();
}

LogicalResult AvgPool2dBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return shapedLike(loc, getOperationName(), adaptor.getInputShape(), adaptor.getDy(), types);
}

static LogicalResult normBackward(Location loc, StringRef op, Value x, Value dy, Value scale,
                                  SmallVectorImpl<Type> &types) {
  if (x.getType() != dy.getType())
    return opError(loc, op) << "x and dy must have one type";
  types.append({x.getType(), scale.getType(), scale.getType()});
  return success();
}

LogicalResult BatchNormBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return normBackward(loc, getOperationName(), adaptor.getX(), adaptor.getDy(),
                      adaptor.getScale(), types);
}

LogicalResult LayerNormBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  return normBackward(loc, getOperationName(), adaptor.getX(), adaptor.getDy(),
                      adaptor.getScale(), types);
}

LogicalResult SoftmaxBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (adaptor.getY().getType() != adaptor.getDy().getType())
    return opError<SoftmaxBackwardOp>(loc) << "y and dy must have one type";
  int64_t axis = adaptor.getAxis();
  if (!normaliseAxis(axis, ranked(adaptor.getY()).getRank()))
    return opError<SoftmaxBackwardOp>(loc) << "axis is out of range";
  types.push_back(adaptor.getY().getType());
  return success();
}

LogicalResult SoftmaxCrossEntropyBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                                        SmallVectorImpl<Type> &types) {
  // dloss is the loss's: a scalar, or (reduction "none") one a row.
  bool perRow = adaptor.getReduction() == "none";
  if (!perRow && !isScalar(adaptor.getDloss()))
    return opError<SoftmaxCrossEntropyBackwardOp>(loc) << "dloss must be a scalar";
  if (perRow && ranked(adaptor.getDloss()).getShape() != ranked(adaptor.getLabels()).getShape())
    return opError<SoftmaxCrossEntropyBackwardOp>(loc)
           << "with reduction \"none\", dloss must have the labels' shape "
           << shapeString(ranked(adaptor.getLabels()).getShape());
  if (failed(checkCrossEntropyOptions(loc, getOperationName(),
                                      adaptor.getLabelSmoothing().convertToDouble(),
                                      adaptor.getReduction(), adaptor.getLogits(),
                                      adaptor.getWeight())))
    return failure();
  types.push_back(adaptor.getLogits().getType());
  return success();
}

LogicalResult MseLossBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  if (!isScalar(adaptor.getDloss()) ||
      adaptor.getPrediction().getType() != adaptor.getTarget().getType())
    return opError<MseLossBackwardOp>(loc) << "needs prediction and target of one type "
                                              "and a scalar dloss";
  types.push_back(adaptor.getPrediction().getType());
  return success();
}

LogicalResult EmbeddingBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  auto dy = ranked(adaptor.getDy());
  int64_t vocab = (int64_t)adaptor.getVocab();
  if (vocab < 1 || dy.getRank() < 1)
    return opError<EmbeddingBackwardOp>(loc) << "needs a positive vocab and a ranked dy";
  types.push_back(RankedTensorType::get({vocab, dy.getShape().back()}, dy.getElementType()));
  return success();
}

LogicalResult SliceBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return shapedLike(loc, getOperationName(), adaptor.getInputShape(), adaptor.getDy(), types);
}

LogicalResult CheckFiniteAndUnscaleOp::inferTypes(Location loc, Adaptor adaptor,
                                                  SmallVectorImpl<Type> &types) {
  if (!isScalar(adaptor.getScale()))
    return opError<CheckFiniteAndUnscaleOp>(loc) << "scale must be a scalar";
  for (Value g : adaptor.getGrads()) // unscaled gradients are f32, whatever came in
    types.push_back(RankedTensorType::get(ranked(g).getShape(), Float32Type::get(loc.getContext())));
  types.push_back(RankedTensorType::get({}, IntegerType::get(loc.getContext(), 1)));
  return success();
}

LogicalResult AllReduceOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  ValueRange grads = adaptor.getGrads();
  if (grads.empty())
    return opError<AllReduceOp>(loc) << "needs at least one tensor";
  if (adaptor.getWorldSize() < 1 || adaptor.getBucket() < 0)
    return opError<AllReduceOp>(loc) << "world_size must be at least 1 and bucket not negative";
  Type dtype = ranked(grads[0]).getElementType();
  for (Value g : grads) {
    if (ranked(g).getElementType() != dtype)
      return opError<AllReduceOp>(loc) << "a bucket holds one dtype, got " << dtype << " and "
                                       << ranked(g).getElementType();
    types.push_back(g.getType());
  }
  return success();
}

LogicalResult CheckFiniteOp::inferTypes(Location loc, Adaptor, SmallVectorImpl<Type> &types) {
  types.push_back(RankedTensorType::get({}, IntegerType::get(loc.getContext(), 1)));
  return success();
}

//===----------------------------------------------------------------------===//
// Training updates.
//===----------------------------------------------------------------------===//

static LogicalResult isFlag(Operation *op, Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() != 0 || !t.getElementType().isInteger(1))
    return op->emitOpError("found_inf must be an i1 scalar, got ") << t;
  return success();
}

static LogicalResult scalars(Operation *op, ValueRange vs) {
  for (Value v : vs)
    if (!isScalar(v))
      return op->emitOpError("expects a scalar, got ") << v.getType();
  return success();
}

static LogicalResult sameShapes(Operation *op, Value param, ValueRange others) {
  for (Value v : others)
    if (cast<RankedTensorType>(v.getType()).getShape() !=
        cast<RankedTensorType>(param.getType()).getShape())
      return op->emitOpError("operand shapes differ: ") << param.getType() << " and "
                                                        << v.getType();
  return success();
}

LogicalResult Fp8ScaleUpdateOp::verify() {
  auto history = cast<RankedTensorType>(getAmaxHistory().getType());
  if (history.getRank() != 1 || history.getDimSize(0) < 1 ||
      !history.getElementType().isF32())
    return emitOpError("amax_history must be a 1-D f32 tensor of at least one amax, got ")
           << history;
  for (Value v : {getScale(), getScaleInv(), getAmax()}) {
    auto t = cast<RankedTensorType>(v.getType());
    if (t.getRank() != 0 || !t.getElementType().isF32())
      return emitOpError("scale, scale_inv and amax must be f32 scalars, got ") << t;
  }
  double top = getFp8Max().convertToDouble();
  if (!(top > 0 && top <= 3.0e38))
    return emitOpError("fp8_max must be positive and finite in f32, got ") << top;
  int64_t margin = static_cast<int64_t>(getMargin());
  if (margin < 0 || margin > 127)
    return emitOpError("margin must be in [0, 127], got ") << margin;
  if (getAmaxCompute() != "max" && getAmaxCompute() != "most_recent")
    return emitOpError("amax_compute must be max or most_recent, got '")
           << getAmaxCompute() << "'";
  return success();
}

LogicalResult UpdateLossScalingOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) ||
      failed(scalars(*this, {getScale(), getGood(), getBad()})))
    return failure();
  if (getIncrEveryNSteps() < 1 || getDecrEveryNNanOrInf() < 1 ||
      getIncrRatio().convertToDouble() < 1.0 || getDecrRatio().convertToDouble() <= 0.0 ||
      getDecrRatio().convertToDouble() > 1.0)
    return emitOpError("needs counts >= 1, incr_ratio >= 1 and decr_ratio in (0, 1]");
  return success();
}

/// lr, and grad_scale when present, are scalars.
static LogicalResult rates(Operation *op, Value lr, Value gradScale) {
  if (gradScale)
    return scalars(op, {lr, gradScale});
  return scalars(op, {lr});
}

LogicalResult SgdOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(rates(*this, getLr(), getGradScale())))
    return failure();
  return sameShapes(*this, getParam(), {getGrad()});
}

LogicalResult MomentumOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(rates(*this, getLr(), getGradScale())))
    return failure();
  return sameShapes(*this, getParam(), {getGrad(), getVelocity()});
}

LogicalResult AdamOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(scalars(*this, {getStep()})) ||
      failed(rates(*this, getLr(), getGradScale())))
    return failure();
  return sameShapes(*this, getParam(), {getGrad(), getM(), getV()});
}

LogicalResult LambOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(scalars(*this, {getStep()})) ||
      failed(rates(*this, getLr(), getGradScale())))
    return failure();
  double beta1 = getBeta1().convertToDouble(), beta2 = getBeta2().convertToDouble();
  if (!(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0))
    return emitOpError("betas must be in [0, 1), got ") << beta1 << ", " << beta2;
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive, got ") << getEpsilon().convertToDouble();
  return sameShapes(*this, getParam(), {getGrad(), getM(), getV()});
}

LogicalResult LionOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(rates(*this, getLr(), getGradScale())))
    return failure();
  double beta1 = getBeta1().convertToDouble(), beta2 = getBeta2().convertToDouble();
  if (!(beta1 >= 0.0 && beta1 < 1.0 && beta2 >= 0.0 && beta2 < 1.0))
    return emitOpError("betas must be in [0, 1), got ") << beta1 << ", " << beta2;
  return sameShapes(*this, getParam(), {getGrad(), getM()});
}

/// rmsprop's `more`: the momentum buffer, the gradient's average, then the
/// grad_scale, each where present.
static Value rmspropOperand(RmspropOp op, int which) {
  size_t buffer = op.getMomentum().convertToDouble() > 0.0, average = op.getCentered();
  size_t at[] = {0, buffer, buffer + average};
  bool present[] = {buffer != 0, average != 0, true};
  return present[which] && at[which] < op.getMore().size() ? op.getMore()[at[which]] : Value();
}
Value RmspropOp::getMomentumBuffer() { return rmspropOperand(*this, 0); }
Value RmspropOp::getGradAverage() { return rmspropOperand(*this, 1); }
Value RmspropOp::getGradScale() { return rmspropOperand(*this, 2); }

LogicalResult RmspropOp::verify() {
  double alpha = getAlpha().convertToDouble(), momentum = getMomentum().convertToDouble();
  if (!(alpha >= 0.0 && alpha < 1.0))
    return emitOpError("alpha must be in [0, 1), got ") << alpha;
  if (!(momentum >= 0.0 && momentum < 1.0))
    return emitOpError("momentum must be in [0, 1), got ") << momentum;
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive, got ") << getEpsilon().convertToDouble();
  size_t states = size_t(momentum > 0.0) + size_t(getCentered());
  if (getMore().size() != states && getMore().size() != states + 1)
    return emitOpError("takes ")
           << states << " optional state" << (states == 1 ? "" : "s")
           << " (a momentum buffer where momentum > 0, the gradient's average where centered)"
           << " and an optional grad_scale, got " << getMore().size() << " more operands";
  if (failed(isFlag(*this, getFoundInf())) || failed(rates(*this, getLr(), getGradScale())))
    return failure();
  SmallVector<Value> sized = {getGrad(), getSquareAvg()};
  for (Value state : {getMomentumBuffer(), getGradAverage()})
    if (state)
      sized.push_back(state);
  return sameShapes(*this, getParam(), sized);
}

LogicalResult AdagradOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || failed(rates(*this, getLr(), getGradScale())))
    return failure();
  if (!(getEpsilon().convertToDouble() > 0.0))
    return emitOpError("epsilon must be positive, got ") << getEpsilon().convertToDouble();
  return sameShapes(*this, getParam(), {getGrad(), getSum()});
}

LogicalResult CountStepOp::verify() {
  if (getFoundInf() && failed(isFlag(*this, getFoundInf())))
    return failure();
  return scalars(*this, {getStep()});
}

LogicalResult EmaOp::verify() {
  if (failed(isFlag(*this, getFoundInf())) || (getStep() && failed(scalars(*this, {getStep()}))))
    return failure();
  double decay = getDecay().convertToDouble();
  if (!(decay >= 0.0 && decay < 1.0))
    return emitOpError("decay must be in [0, 1), got ") << decay;
  if (!graph::elementType(getAverage().getType()).isF32())
    return emitOpError("the average must be f32, got ") << getAverage().getType();
  return sameShapes(*this, getAverage(), {getValue()});
}

LogicalResult GradNormOp::inferTypes(Location loc, Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  Value scale = adaptor.getScale();
  if (!isScalar(scale) || !ranked(scale).getElementType().isF32())
    return opError<GradNormOp>(loc) << "the scale must be an f32 scalar, got " << scale.getType();
  if (adaptor.getGrads().empty())
    return opError<GradNormOp>(loc) << "needs at least one gradient";
  types.push_back(scale.getType());
  return success();
}

LogicalResult ClipScaleOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  for (Value v : {adaptor.getNorm(), adaptor.getScale()})
    if (!isScalar(v) || !ranked(v).getElementType().isF32())
      return opError<ClipScaleOp>(loc) << "takes f32 scalars, got " << v.getType();
  if (!(adaptor.getMaxNorm().convertToDouble() > 0))
    return opError<ClipScaleOp>(loc) << "max_norm must be positive";
  types.push_back(adaptor.getScale().getType());
  return success();
}

LogicalResult LrScheduleOp::inferTypes(Location loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  for (Value v : {adaptor.getPeak(), adaptor.getStep(), adaptor.getTotalSteps()})
    if (!isScalar(v) || !ranked(v).getElementType().isF32())
      return opError<LrScheduleOp>(loc) << "takes f32 scalars, got " << v.getType();
  num::ScheduleKind kind;
  if (!num::scheduleKindOf(adaptor.getKind().str().c_str(), kind))
    return opError<LrScheduleOp>(loc) << "kind must be " << num::kScheduleList << ", got '"
                                      << adaptor.getKind() << "'";
  if (adaptor.getWarmupSteps() < 0 || adaptor.getStepEvery() < 1 ||
      adaptor.getMinLr().convertToDouble() < 0 || adaptor.getGamma().convertToDouble() <= 0 ||
      !(adaptor.getPower().convertToDouble() > 0) || adaptor.getCycles() < 1 ||
      adaptor.getDecaySteps() < 0)
    return opError<LrScheduleOp>(loc)
           << "needs warmup_steps >= 0, step_every >= 1, min_lr >= 0, gamma > 0, power > 0, "
              "cycles >= 1 and decay_steps >= 0";
  types.push_back(adaptor.getPeak().getType());
  return success();
}

LogicalResult AssignOp::verify() { return sameShapes(*this, getTarget(), {getValue()}); }

LogicalResult RestoreIfSkippedOp::verify() {
  if (failed(isFlag(*this, getFoundInf())))
    return failure();
  if (getTarget().getType() != getBackup().getType())
    return emitOpError("target and backup must have one type");
  return success();
}

LogicalResult AccumulateOp::verify() { return sameShapes(*this, getAcc(), {getGrad()}); }

} // namespace ampc::graph
