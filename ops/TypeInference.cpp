// Shape and dtype inference of the node ops. Inference also verifies: each
// node op's verifier compares these results with the op's result types, and
// every user-visible shape, dtype or attribute mistake is reported here with
// the op's name.
#include "ops/InferenceUtils.h"

using namespace mlir;

namespace ampc::graph {
using namespace infer;


LogicalResult checkResultTypes(Operation *op, TypeRange inferred) {
  if (TypeRange(op->getResultTypes()) == inferred)
    return success();
  InFlightDiagnostic d = op->emitOpError("result types (");
  llvm::interleaveComma(op->getResultTypes(), d);
  d << ") differ from the inferred (";
  llvm::interleaveComma(inferred, d);
  return d << ")";
}

LogicalResult inferBroadcast(Location loc, Type lhs, Type rhs,
                             SmallVectorImpl<Type> &types) {
  auto l = dyn_cast<RankedTensorType>(lhs), r = dyn_cast<RankedTensorType>(rhs);
  if (!l || !r)
    return emitError(loc) << "expects ranked tensors";
  if (l.getElementType() != r.getElementType())
    return emitError(loc) << "operands have different dtypes: " << lhs << " and " << rhs;
  SmallVector<int64_t> shape;
  if (!broadcastShapes(l.getShape(), r.getShape(), shape))
    return emitError(loc) << "shapes " << shapeString(l.getShape()) << " and "
                          << shapeString(r.getShape()) << " do not broadcast";
  types.push_back(RankedTensorType::get(shape, l.getElementType()));
  return success();
}

LogicalResult MatmulOp::inferTypes(Location loc, Adaptor adaptor,
                                   SmallVectorImpl<Type> &types) {
  auto a = ranked(adaptor.getA()), b = ranked(adaptor.getB());
  if (!a || !b || a.getRank() < 2 || b.getRank() < 2)
    return opError<MatmulOp>(loc) << "expects operands of rank 2 or more";
  if (failed(sameDtype(loc, getOperationName(), a, b)))
    return failure();
  ArrayRef<int64_t> as = a.getShape(), bs = b.getShape();
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = ta ? as.back() : as[as.size() - 2];
  int64_t k = ta ? as[as.size() - 2] : as.back();
  int64_t kb = tb ? bs.back() : bs[bs.size() - 2];
  int64_t n = tb ? bs[bs.size() - 2] : bs.back();
  if (k != kb)
    return opError<MatmulOp>(loc) << "contracting dimensions differ: "
                                  << shapeString(as) << (ta ? "^T" : "") << " x "
                                  << shapeString(bs) << (tb ? "^T" : "");
  SmallVector<int64_t> shape;
  if (!broadcastShapes(as.drop_back(2), bs.drop_back(2), shape))
    return opError<MatmulOp>(loc) << "batch dimensions do not broadcast: "
                                  << shapeString(as) << " x " << shapeString(bs);
  shape.append({m, n});
  types.push_back(RankedTensorType::get(shape, a.getElementType()));
  return success();
}

static bool isFp8Type(Type t) { return t.isFloat8E4M3FN() || t.isFloat8E5M2(); }

static bool isF32Scalar(RankedTensorType t) {
  return t && t.getRank() == 0 && t.getElementType().isF32();
}

LogicalResult Fp8QuantizeOp::inferTypes(Location loc, Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX()), scale = ranked(adaptor.getScale());
  if (!x || !isF32Scalar(scale))
    return opError<Fp8QuantizeOp>(loc) << "scale must be an f32 scalar";
  if (!isFp8Type(adaptor.getTo()))
    return opError<Fp8QuantizeOp>(loc) << "quantizes to f8E4M3FN or f8E5M2, not "
                                       << adaptor.getTo();
  types.push_back(RankedTensorType::get(x.getShape(), adaptor.getTo()));
  types.push_back(RankedTensorType::get({}, Float32Type::get(loc.getContext())));
  return success();
}

LogicalResult Fp8MatmulOp::inferTypes(Location loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  auto a = ranked(adaptor.getA()), b = ranked(adaptor.getB());
  if (!a || !b || !isFp8Type(a.getElementType()) || !isFp8Type(b.getElementType()))
    return opError<Fp8MatmulOp>(loc) << "multiplies f8E4M3FN or f8E5M2 operands";
  if (a.getElementType().isFloat8E5M2() && b.getElementType().isFloat8E5M2())
    return opError<Fp8MatmulOp>(loc) << "takes at most one f8E5M2 operand";
  if (!isF32Scalar(ranked(adaptor.getAScaleInv())) || !isF32Scalar(ranked(adaptor.getBScaleInv())))
    return opError<Fp8MatmulOp>(loc) << "the scale inverses must be f32 scalars";
  Type to = adaptor.getTo();
  if (!to.isF32() && !to.isF16() && !to.isBF16())
    return opError<Fp8MatmulOp>(loc) << "results in f32, f16 or bf16, not " << to;
  if (a.getRank() < 2 || b.getRank() < 2)
    return opError<Fp8MatmulOp>(loc) << "expects operands of rank 2 or more";
  ArrayRef<int64_t> as = a.getShape(), bs = b.getShape();
  bool ta = adaptor.getTransposeA(), tb = adaptor.getTransposeB();
  int64_t m = ta ? as.back() : as[as.size() - 2], k = ta ? as[as.size() - 2] : as.back();
  int64_t kb = tb ? bs.back() : bs[bs.size() - 2], n = tb ? bs[bs.size() - 2] : bs.back();
  SmallVector<int64_t> shape;
  if (k != kb || !broadcastShapes(as.drop_back(2), bs.drop_back(2), shape))
    return opError<Fp8MatmulOp>(loc) << "operands do not multiply: " << shapeString(as)
                                     << (ta ? "^T" : "") << " x " << shapeString(bs)
                                     << (tb ? "^T" : "");
  shape.append({m, n});
  types.push_back(RankedTensorType::get(shape, to));
  return success();
}

LogicalResult Conv2dOp::inferTypes(Location loc, Adaptor adaptor,
                                   SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  auto x = ranked(adaptor.getX()), w = ranked(adaptor.getFilter());
  if (!x || !w || x.getRank() != 4 || w.getRank() != 4)
    return opError(loc, op) << "expects a 4-D input and a 4-D filter";
  if (failed(sameDtype(loc, op, x, w)))
    return failure();
  bool ok;
  bool nhwc = isNhwc(loc, op, adaptor.getLayout(), ok);
  SmallVector<int64_t> pads;
  if (!ok || failed(checkPair(loc, op, "strides", adaptor.getStrides())) ||
      failed(checkPair(loc, op, "dilations", adaptor.getDilations())) ||
      failed(expandPadding(loc, op, adaptor.getPadding(), pads)))
    return failure();
  int64_t groups = adaptor.getGroups();
  ArrayRef<int64_t> xs = x.getShape(), ws = w.getShape();
  int64_t n = xs[0], c = nhwc ? xs[3] : xs[1], h = nhwc ? xs[1] : xs[2],
          wd = nhwc ? xs[2] : xs[3];
  int64_t cout = ws[0], cin = nhwc ? ws[3] : ws[1], kh = nhwc ? ws[1] : ws[2],
          kw = nhwc ? ws[2] : ws[3];
  if (groups < 1 || c % groups || cout % groups)
    return opError(loc, op) << "groups (" << groups
                            << ") must divide the input and output channels";
  if (cin * groups != c)
    return opError(loc, op) << "filter " << shapeString(ws) << " expects "
                            << cin * groups << " input channels, got " << c;
  ArrayRef<int64_t> s = adaptor.getStrides(), d = adaptor.getDilations();
  int64_t oh = windowOut(h, pads[0], pads[1], kh, s[0], d[0]);
  int64_t ow = windowOut(wd, pads[2], pads[3], kw, s[1], d[1]);
  if (oh < 1 || ow < 1)
    return opError(loc, op) << "filter is larger than the padded input";
  SmallVector<int64_t> shape =
      nhwc ? SmallVector<int64_t>{n, oh, ow, cout} : SmallVector<int64_t>{n, cout, oh, ow};
  types.push_back(RankedTensorType::get(shape, x.getElementType()));
  return success();
}

LogicalResult DropoutOp::inferTypes(Location loc, Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  double rate = adaptor.getRate().convertToDouble();
  if (!(rate >= 0.0 && rate < 1.0))
    return opError<DropoutOp>(loc) << "rate must be in [0, 1), got " << rate;
  types.push_back(adaptor.getX().getType());
  return success();
}

LogicalResult CastOp::inferTypes(Location loc, Adaptor adaptor,
                                 SmallVectorImpl<Type> &types) {
  auto x = ranked(adaptor.getX());
  Type to = adaptor.getTo();
  if (!x || dtypeName(to).empty())
    return opError<CastOp>(loc) << "cannot cast to " << to;
  types.push_back(RankedTensorType::get(x.getShape(), to));
  return success();
}

LogicalResult ConstantOp::inferTypes(Location loc, Adaptor adaptor,
                                     SmallVectorImpl<Type> &types) {
  auto type = dyn_cast<RankedTensorType>(adaptor.getValue().getType());
  if (!type || !type.hasStaticShape())
    return opError<ConstantOp>(loc) << "value must be a static tensor";
  types.push_back(type);
  return success();
}

} // namespace ampc::graph
