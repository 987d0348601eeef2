// Helpers shared by the type inference files of the graph ops.
#ifndef AMPC_OPS_INFERENCEUTILS_H
#define AMPC_OPS_INFERENCEUTILS_H

#include "mlir/IR/Diagnostics.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::graph::infer {
using namespace mlir;

inline InFlightDiagnostic opError(Location loc, StringRef op) {
  return emitError(loc) << "'" << op << "' op ";
}

template <typename OpT> InFlightDiagnostic opError(Location loc) {
  return opError(loc, OpT::getOperationName());
}

inline RankedTensorType ranked(Value v) {
  return dyn_cast<RankedTensorType>(v.getType());
}

inline std::string shapeString(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// A cross entropy's `label_smoothing` must be in [0, 1], as PyTorch's, its
/// `reduction` "mean", "sum" or "none", and its class weights (when given) f32 `[C]`
/// for logits `[..., C]`.
inline LogicalResult checkCrossEntropyOptions(Location loc, StringRef op, double smoothing,
                                              StringRef reduction, Value logits, Value weight) {
  if (!(smoothing >= 0.0 && smoothing <= 1.0))
    return opError(loc, op) << "label_smoothing must be in [0, 1], got " << smoothing;
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    return opError(loc, op) << "reduction must be \"mean\", \"sum\" or \"none\", got \""
                            << reduction << "\"";
  if (!weight)
    return success();
  auto w = ranked(weight), x = ranked(logits);
  if (x.getRank() < 1)
    return opError(loc, op) << "logits need a class dimension";
  int64_t classes = x.getShape().back();
  if (!w.getElementType().isF32() || w.getRank() != 1 || w.getDimSize(0) != classes)
    return opError(loc, op) << "weight must be f32 [classes] = [" << classes << "], got "
                            << weight.getType();
  return success();
}

/// Normalises a possibly negative axis; false when it is out of range.
inline bool normaliseAxis(int64_t &axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  return axis >= 0 && axis < rank;
}

inline bool broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                     SmallVectorImpl<int64_t> &out) {
  size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

/// Output size of a sliding window along one dimension.
inline int64_t windowOut(int64_t in, int64_t padBefore, int64_t padAfter, int64_t window,
                  int64_t stride, int64_t dilation) {
  int64_t span = dilation * (window - 1) + 1;
  return (in + padBefore + padAfter - span) / stride + 1;
}

/// Checks `padding` ([h, w] or [top, bottom, left, right]) and expands it.
inline LogicalResult expandPadding(Location loc, StringRef op, ArrayRef<int64_t> padding,
                            SmallVectorImpl<int64_t> &pads) {
  if (padding.size() == 2)
    pads.assign({padding[0], padding[0], padding[1], padding[1]});
  else if (padding.size() == 4)
    pads.assign(padding.begin(), padding.end());
  else
    return opError(loc, op) << "padding needs 2 or 4 values, got " << padding.size();
  for (int64_t p : pads)
    if (p < 0)
      return opError(loc, op) << "padding must not be negative";
  return success();
}

inline LogicalResult checkPair(Location loc, StringRef op, StringRef what,
                        ArrayRef<int64_t> values) {
  if (values.size() != 2)
    return opError(loc, op) << what << " needs 2 values, got " << values.size();
  if (values[0] < 1 || values[1] < 1)
    return opError(loc, op) << what << " must be positive";
  return success();
}

inline bool isNhwc(Location loc, StringRef op, StringRef layout, bool &ok) {
  ok = layout == "NHWC" || layout == "NCHW";
  if (!ok)
    opError(loc, op) << "layout must be NHWC or NCHW, got '" << layout << "'";
  return layout == "NHWC";
}

/// Shared inference of max_pool2d and avg_pool2d.
inline LogicalResult inferPool(Location loc, StringRef op, Value x, ArrayRef<int64_t> kernel,
                        std::optional<ArrayRef<int64_t>> strides,
                        ArrayRef<int64_t> padding, StringRef layout,
                        SmallVectorImpl<Type> &types) {
  auto xt = ranked(x);
  if (!xt || xt.getRank() != 4)
    return opError(loc, op) << "expects a 4-D input, got " << x.getType();
  bool ok;
  bool nhwc = isNhwc(loc, op, layout, ok);
  if (!ok)
    return failure();
  ArrayRef<int64_t> stride = strides ? *strides : kernel;
  SmallVector<int64_t> pads;
  if (failed(checkPair(loc, op, "kernel", kernel)) ||
      failed(checkPair(loc, op, "strides", stride)) ||
      failed(expandPadding(loc, op, padding, pads)))
    return failure();
  if (pads[0] >= kernel[0] || pads[1] >= kernel[0] || pads[2] >= kernel[1] ||
      pads[3] >= kernel[1])
    return opError(loc, op) << "padding must be smaller than the kernel";
  SmallVector<int64_t> shape(xt.getShape());
  int hAxis = nhwc ? 1 : 2;
  int64_t oh = windowOut(shape[hAxis], pads[0], pads[1], kernel[0], stride[0], 1);
  int64_t ow = windowOut(shape[hAxis + 1], pads[2], pads[3], kernel[1], stride[1], 1);
  if (oh < 1 || ow < 1)
    return opError(loc, op) << "window is larger than the padded input "
                            << shapeString(xt.getShape());
  shape[hAxis] = oh;
  shape[hAxis + 1] = ow;
  types.push_back(RankedTensorType::get(shape, xt.getElementType()));
  return success();
}

inline LogicalResult sameDtype(Location loc, StringRef op, Type a, Type b) {
  if (elementType(a) != elementType(b))
    return opError(loc, op) << "operands have different dtypes: " << a << " and " << b;
  return success();
}


} // namespace ampc::graph::infer

#endif
