// Shape and dtype inference of data movement, pooling, normalisation,
// reduction, lookup and loss ops (see ops/TypeInference.cpp for the contract).
#include "ops/InferenceUtils.h"

using namespace mlir;

namespace ampc::graph {
using namespace infer;

LogicalResult ReshapeOp::inferTypes(Location loc, Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  SmallVector<int64_t> shape(adaptor.getShape());
  int64_t known = 1, inferred = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1 && inferred < 0)
      inferred = i;
    else if (shape[i] < 0)
      return opError<ReshapeOp>(loc) << "shape " << shapeString(shape)
                                     << " may hold one -1 and no other negative";
    else
      known *= shape[i];
  }
  int64_t count = x.getNumElements();
  if (inferred >= 0 && known > 0 && count % known == 0)
    shape[inferred] = count / known;
  if ((inferred >= 0 && shape[inferred] < 0) ||
      RankedTensorType::get(shape, x.getElementType()).getNumElements() != count)
    return opError<ReshapeOp>(loc) << "cannot reshape " << shapeString(x.getShape())
                                   << " to " << shapeString(adaptor.getShape());
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult TransposeOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  ArrayRef<int64_t> perm = adaptor.getPerm();
  SmallVector<bool> seen(x.getRank(), false);
  SmallVector<int64_t> shape;
  for (int64_t p : perm) {
    if (p < 0 || p >= x.getRank() || seen[p] || (int64_t)perm.size() != x.getRank())
      return opError<TransposeOp>(loc) << "perm " << shapeString(perm)
                                       << " is not a permutation of rank " << x.getRank();
    seen[p] = true;
    shape.push_back(x.getDimSize(p));
  }
  if ((int64_t)perm.size() != x.getRank())
    return opError<TransposeOp>(loc) << "perm needs " << x.getRank() << " entries";
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult FlattenOp::inferTypes(Location loc, Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis > x.getRank())
    return opError<FlattenOp>(loc) << "axis " << axis << " is out of range for rank "
                                   << x.getRank();
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.getRank(); ++i)
    (i < axis ? outer : inner) *= x.getDimSize(i);
  types.push_back(RankedTensorType::get({outer, inner}, x.getElementType()));
  return success();
}

LogicalResult ConcatOp::inferTypes(Location loc, Adaptor adaptor,
                                   SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return opError<ConcatOp>(loc) << "needs at least one operand";
  auto first = ranked(inputs[0]);
  int64_t axis = adaptor.getAxis();
  if (!normaliseAxis(axis, first.getRank()))
    return opError<ConcatOp>(loc) << "axis " << adaptor.getAxis() << " is out of range";
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (Value v : inputs) {
    auto t = ranked(v);
    if (failed(sameDtype(loc, getOperationName(), first, t)))
      return failure();
    bool match = t.getRank() == first.getRank();
    for (int64_t i = 0; match && i < t.getRank(); ++i)
      match = i == axis || t.getDimSize(i) == first.getDimSize(i);
    if (!match)
      return opError<ConcatOp>(loc) << "operand shapes " << shapeString(first.getShape())
                                    << " and " << shapeString(t.getShape())
                                    << " differ off the axis";
    shape[axis] += t.getDimSize(axis);
  }
  types.push_back(RankedTensorType::get(shape, first.getElementType()));
  return success();
}

LogicalResult SliceOp::inferTypes(Location loc, Adaptor adaptor,
                                  SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  ArrayRef<int64_t> axes = adaptor.getAxes(), starts = adaptor.getStarts(),
                    ends = adaptor.getEnds();
  if (axes.size() != starts.size() || axes.size() != ends.size())
    return opError<SliceOp>(loc) << "axes, starts and ends need the same length";
  SmallVector<int64_t> shape(x.getShape());
  SmallVector<bool> seen(x.getRank(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i];
    if (!normaliseAxis(axis, x.getRank()) || seen[axis])
      return opError<SliceOp>(loc) << "axis " << axes[i] << " is out of range or repeated";
    seen[axis] = true;
    int64_t dim = x.getDimSize(axis);
    auto clampIndex = [dim](int64_t v) {
      v = v < 0 ? v + dim : v;
      return std::min(std::max<int64_t>(v, 0), dim);
    };
    shape[axis] = std::max<int64_t>(0, clampIndex(ends[i]) - clampIndex(starts[i]));
  }
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult MaxPool2dOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(), adaptor.getKernel(),
                   adaptor.getStrides(), adaptor.getPadding(), adaptor.getLayout(), types);
}

LogicalResult AvgPool2dOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferPool(loc, getOperationName(), adaptor.getX(), adaptor.getKernel(),
                   adaptor.getStrides(), adaptor.getPadding(), adaptor.getLayout(), types);
}

LogicalResult GlobalAvgPoolOp::inferTypes(Location loc, Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  if (x.getRank() != 4)
    return opError<GlobalAvgPoolOp>(loc) << "expects a 4-D input, got " << x;
  bool ok;
  bool nhwc = isNhwc(loc, getOperationName(), adaptor.getLayout(), ok);
  if (!ok)
    return failure();
  int64_t c = nhwc ? x.getDimSize(3) : x.getDimSize(1);
  types.push_back(RankedTensorType::get({x.getDimSize(0), c}, x.getElementType()));
  return success();
}

LogicalResult BatchNormOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  bool ok;
  bool nhwc = isNhwc(loc, getOperationName(), adaptor.getLayout(), ok);
  if (!ok)
    return failure();
  if (x.getRank() < 2)
    return opError<BatchNormOp>(loc) << "expects an input of rank 2 or more";
  int64_t c = x.getDimSize(nhwc ? x.getRank() - 1 : 1);
  for (Value v : {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                  adaptor.getVariance()}) {
    auto t = ranked(v);
    if (t.getRank() != 1 || t.getDimSize(0) != c)
      return opError<BatchNormOp>(loc) << "scale, bias and statistics must be [" << c
                                       << "], got " << t;
  }
  types.push_back(x);
  return success();
}

LogicalResult LayerNormOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  int64_t axis = adaptor.getAxis();
  if (!normaliseAxis(axis, x.getRank()))
    return opError<LayerNormOp>(loc) << "axis " << adaptor.getAxis() << " is out of range";
  ArrayRef<int64_t> normalised = x.getShape().drop_front(axis);
  for (Value v : {adaptor.getScale(), adaptor.getBias()}) {
    auto t = ranked(v);
    if (failed(sameDtype(loc, getOperationName(), x, t)))
      return failure();
    if (t.getShape() != normalised)
      return opError<LayerNormOp>(loc) << "scale and bias must be " << shapeString(normalised)
                                       << ", got " << shapeString(t.getShape());
  }
  types.push_back(x);
  return success();
}

/// q [b, sq, h, d], k [b, sk, h, d], v [b, sk, h, dv]: one dtype; the
/// result's type, [b, sq, h, dv].
static FailureOr<RankedTensorType> attentionResult(Location loc, StringRef op, Value qv,
                                                   Value kv, Value vv, Value bias,
                                                   std::optional<llvm::APFloat> scale,
                                                   double dropout) {
  auto q = ranked(qv), k = ranked(kv), v = ranked(vv);
  for (auto t : {k, v})
    if (failed(sameDtype(loc, op, q, t)))
      return failure();
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return opError(loc, op) << "q, k and v must be [batch, seq, heads, head_dim]";
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (ks[0] != qs[0] || vs[0] != qs[0] || ks[2] != qs[2] || vs[2] != qs[2])
    return opError(loc, op) << "q, k and v need one batch and head count, got "
                            << shapeString(qs) << ", " << shapeString(ks) << ", "
                            << shapeString(vs);
  if (ks[3] != qs[3] || vs[1] != ks[1])
    return opError(loc, op) << "k must be [batch, seq_k, heads, " << qs[3]
                            << "] and v [batch, seq_k, heads, head_dim_v], got "
                            << shapeString(ks) << ", " << shapeString(vs);
  if (qs[3] < 1)
    return opError(loc, op) << "head_dim must be at least 1";
  if (scale && !(scale->isFiniteNonZero()))
    return opError(loc, op) << "scale must be finite and nonzero";
  if (!(dropout >= 0.0 && dropout < 1.0))
    return opError(loc, op) << "dropout must be in [0, 1), got " << dropout;
  if (bias) {
    auto bs = ranked(bias).getShape();
    int64_t full[4] = {qs[0], qs[2], qs[1], ks[1]}; // [batch, heads, seq_q, seq_k]
    bool fits = bs.size() == 4;
    for (size_t d = 0; fits && d < 4; ++d)
      fits = bs[d] == full[d] || bs[d] == 1;
    if (!fits)
      return opError(loc, op) << "bias must broadcast to [batch, heads, seq_q, seq_k] = "
                              << shapeString(full) << " (each dimension that or 1), got "
                              << shapeString(bs);
  }
  SmallVector<int64_t> shape(qs);
  shape[3] = vs[3];
  return RankedTensorType::get(shape, q.getElementType());
}

LogicalResult AttentionOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> y = attentionResult(loc, getOperationName(), adaptor.getQ(),
                                                  adaptor.getK(), adaptor.getV(),
                                                  adaptor.getBias(), adaptor.getScale(),
                                                  adaptor.getDropout().convertToDouble());
  if (failed(y))
    return failure();
  types.push_back(*y);
  return success();
}

LogicalResult AttentionBackwardOp::inferTypes(Location loc, Adaptor adaptor,
                                              SmallVectorImpl<Type> &types) {
  FailureOr<RankedTensorType> y = attentionResult(loc, getOperationName(), adaptor.getQ(),
                                                  adaptor.getK(), adaptor.getV(),
                                                  adaptor.getBias(), adaptor.getScale(),
                                                  adaptor.getDropout().convertToDouble());
  if (failed(y))
    return failure();
  if (adaptor.getY().getType() != *y || adaptor.getDy().getType() != *y)
    return opError<AttentionBackwardOp>(loc) << "y and dy must be the attention's result, "
                                             << shapeString(y->getShape());
  for (Value v : {adaptor.getQ(), adaptor.getK(), adaptor.getV()})
    types.push_back(v.getType());
  return success();
}

static LogicalResult inferReduce(Location loc, StringRef op, Value xv,
                                 ArrayRef<int64_t> axes, bool keepdims,
                                 SmallVectorImpl<Type> &types) {
  auto x = ranked(xv);
  SmallVector<bool> reduced(x.getRank(), axes.empty());
  for (int64_t a : axes) {
    int64_t axis = a;
    if (!normaliseAxis(axis, x.getRank()) || reduced[axis])
      return opError(loc, op) << "axis " << a << " is out of range or repeated";
    reduced[axis] = true;
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.getRank(); ++i)
    if (!reduced[i])
      shape.push_back(x.getDimSize(i));
    else if (keepdims)
      shape.push_back(1);
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult ReduceSumOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  return inferReduce(loc, getOperationName(), adaptor.getX(), adaptor.getAxes(),
                     adaptor.getKeepdims(), types);
}

LogicalResult ReduceMeanOp::inferTypes(Location loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferReduce(loc, getOperationName(), adaptor.getX(), adaptor.getAxes(),
                     adaptor.getKeepdims(), types);
}

static LogicalResult inferAxisOp(Location loc, StringRef op, Value x, int64_t axis,
                                 SmallVectorImpl<Type> &types) {
  int64_t rank = ranked(x).getRank();
  if (!normaliseAxis(axis, rank))
    return opError(loc, op) << "axis is out of range for rank " << rank;
  types.push_back(x.getType());
  return success();
}

LogicalResult SoftmaxOp::inferTypes(Location loc, Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  return inferAxisOp(loc, getOperationName(), adaptor.getX(), adaptor.getAxis(), types);
}

LogicalResult LogSoftmaxOp::inferTypes(Location loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  return inferAxisOp(loc, getOperationName(), adaptor.getX(), adaptor.getAxis(), types);
}

LogicalResult EmbeddingOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto ids = ranked(adaptor.getIds()), w = ranked(adaptor.getWeight());
  if (w.getRank() != 2)
    return opError<EmbeddingOp>(loc) << "weight must be [vocab, dim], got " << w;
  SmallVector<int64_t> shape(ids.getShape());
  shape.push_back(w.getDimSize(1));
  types.push_back(RankedTensorType::get(shape, w.getElementType()));
  return success();
}

LogicalResult SoftmaxCrossEntropyOp::inferTypes(Location loc, Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  auto logits = ranked(adaptor.getLogits()), labels = ranked(adaptor.getLabels());
  if (logits.getRank() < 1 || labels.getShape() != logits.getShape().drop_back())
    return opError<SoftmaxCrossEntropyOp>(loc)
           << "labels " << shapeString(labels.getShape()) << " must be the logits' shape "
           << shapeString(logits.getShape()) << " without the class dimension";
  if (failed(checkCrossEntropyOptions(loc, getOperationName(),
                                      adaptor.getLabelSmoothing().convertToDouble(),
                                      adaptor.getReduction(), adaptor.getLogits(),
                                      adaptor.getWeight())))
    return failure();
  Type element = logits.getElementType();
  if (element.isF16() || element.isBF16()) // computed in f32: the loss stays f32
    element = Float32Type::get(loc.getContext());
  // Reduction "none": a loss a row, in the labels' shape.
  ArrayRef<int64_t> shape;
  if (adaptor.getReduction() == "none")
    shape = labels.getShape();
  types.push_back(RankedTensorType::get(shape, element));
  return success();
}

LogicalResult MseLossOp::inferTypes(Location loc, Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  Type p = adaptor.getPrediction().getType(), t = adaptor.getTarget().getType();
  if (p != t)
    return opError<MseLossOp>(loc) << "prediction " << p << " and target " << t
                                   << " differ";
  types.push_back(RankedTensorType::get({}, elementType(p)));
  return success();
}

} // namespace ampc::graph
