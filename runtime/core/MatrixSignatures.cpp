// Kernel signatures of convolutions, pooling and normalisations
// (KernelSignatures.h): the result shapes the kernels assume, computed as the
// graph's type inference computes them.
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt::signature {
namespace {

/// Output size of a sliding window along one dimension; 0 when it does not
/// fit (or the arithmetic would overflow).
int64_t windowOut(int64_t in, int64_t before, int64_t after, int64_t window, int64_t stride,
                  int64_t dilation) {
  __int128 span = (__int128)dilation * (window - 1) + 1, padded = (__int128)in + before + after;
  if (padded < span || stride < 1)
    return 0;
  return int64_t((padded - span) / stride + 1);
}

struct Conv {
  bool nhwc;
  Shape strides, dilations, pads;
  int64_t groups;
};

Conv convAttrs(const StepView &s) {
  Conv c{nhwcAttr(s), intsAttr(s, "strides", {1, 1}, 2, 1), intsAttr(s, "dilations", {1, 1}, 2, 1),
         padsAttr(s), s.attrs.getInt("groups", 1)};
  s.require(c.groups >= 1, "groups must be positive");
  return c;
}

/// x, filter and y of one convolution agree (in the op's layout).
void convShapes(const StepView &s, const Buffer &x, const Buffer &f, const Buffer &y) {
  requireFloats(s);
  s.require(x.shape.size() == 4 && f.shape.size() == 4 && y.shape.size() == 4,
            "a convolution's input, filter and result are 4-D");
  Conv a = convAttrs(s);
  const Shape &xs = x.shape, &fs = f.shape;
  int64_t n = xs[0], c = a.nhwc ? xs[3] : xs[1], h = a.nhwc ? xs[1] : xs[2],
          w = a.nhwc ? xs[2] : xs[3];
  int64_t cout = fs[0], cin = a.nhwc ? fs[3] : fs[1], kh = a.nhwc ? fs[1] : fs[2],
          kw = a.nhwc ? fs[2] : fs[3];
  s.require(c % a.groups == 0 && cout % a.groups == 0 && cin * a.groups == c && kh > 0 && kw > 0,
            "filter " + shapeText(fs) + " does not fit input " + shapeText(xs) + " in " +
                std::to_string(a.groups) + " groups");
  int64_t oh = windowOut(h, a.pads[0], a.pads[1], kh, a.strides[0], a.dilations[0]);
  int64_t ow = windowOut(w, a.pads[2], a.pads[3], kw, a.strides[1], a.dilations[1]);
  s.require(oh > 0 && ow > 0, "the filter is larger than the padded input");
  requireShape(s, y, a.nhwc ? Shape{n, oh, ow, cout} : Shape{n, cout, oh, ow});
}

/// The result shape of pooling `x` with the step's window.
Shape pooled(const StepView &s, const Buffer &x) {
  s.require(x.shape.size() == 4, "pooling takes a 4-D input");
  bool nhwc = nhwcAttr(s);
  Shape kernel = intsAttr(s, "kernel", {}, 2, 1);
  Shape strides = intsAttr(s, "strides", kernel, 2, 1), pads = padsAttr(s);
  s.require(pads[0] < kernel[0] && pads[1] < kernel[0] && pads[2] < kernel[1] &&
                pads[3] < kernel[1],
            "padding must be smaller than the window");
  Shape y = x.shape;
  int h = nhwc ? 1 : 2;
  y[h] = windowOut(x.shape[h], pads[0], pads[1], kernel[0], strides[0], 1);
  y[h + 1] = windowOut(x.shape[h + 1], pads[2], pads[3], kernel[1], strides[1], 1);
  s.require(y[h] > 0 && y[h + 1] > 0, "the window is larger than the padded input");
  return y;
}

/// The channel count of a batch norm's input (last axis in NHWC, axis 1 else).
int64_t channelsOf(const StepView &s, const Buffer &x) {
  bool nhwc = nhwcAttr(s);
  s.require(x.shape.size() >= (nhwc ? 1u : 2u), "the input has no channel axis");
  int64_t c = x.shape[nhwc ? x.shape.size() - 1 : 1];
  s.require(c > 0 && numElements(x.shape) > 0, "batch norm needs a non-empty input");
  return c;
}

/// The size of layer norm's normalised trailing dimensions.
int64_t normalisedOf(const StepView &s, const Buffer &x) {
  int64_t axis = axisOf(s, s.attrs.getInt("axis", -1), x.shape.size()), inner = 1;
  for (size_t d = axis; d < x.shape.size(); ++d)
    inner *= x.shape[d];
  return inner;
}

void perChannel(const StepView &s, const Buffer &b, int64_t count) {
  s.require(numElements(b.shape) == count,
            "'" + b.name + "' needs " + std::to_string(count) + " values");
}

} // namespace

void conv2d(const StepView &s) { convShapes(s, s.in(0), s.in(1), s.out(0)); }
void conv2dBackwardInput(const StepView &s) { convShapes(s, s.out(0), s.in(1), s.in(0)); }
void conv2dBackwardFilter(const StepView &s) { convShapes(s, s.in(0), s.out(0), s.in(1)); }

void pool(const StepView &s) {
  requireFloats(s);
  requireShape(s, s.out(0), pooled(s, s.in(0)));
}

void globalAvgPool(const StepView &s) {
  requireFloats(s);
  const Buffer &x = s.in(0);
  s.require(x.shape.size() == 4, "global_avg_pool takes a 4-D input");
  bool nhwc = nhwcAttr(s);
  requireShape(s, s.out(0), {x.shape[0], x.shape[nhwc ? 3 : 1]});
}

void maxPoolBackward(const StepView &s) {
  requireFloats(s);
  requireShape(s, s.out(0), s.in(0).shape);
  requireShape(s, s.in(1), pooled(s, s.in(0)));
}

void avgPoolBackward(const StepView &s) {
  requireFloats(s);
  requireShape(s, s.in(0), pooled(s, s.out(0)));
}

/// A batch norm's relu and its operand (NormRelu), of x's shape.
static void normRelu(const StepView &s) {
  NormRelu r = normReluOf(s.step, s.attrs);
  s.require(!r.relu || s.out(0).dtype != DType::F64, "a relu's result is f32 or narrower");
  if (r.operand >= 0)
    requireShape(s, s.in(r.operand), s.in(0).shape);
}

void batchNorm(const StepView &s) {
  requireFloats(s);
  int64_t c = channelsOf(s, s.in(0));
  for (size_t i = 1; i < 5; ++i)
    perChannel(s, s.in(i), c);
  requireShape(s, s.out(0), s.in(0).shape);
  normRelu(s);
}

void layerNorm(const StepView &s) {
  requireFloats(s);
  int64_t inner = normalisedOf(s, s.in(0));
  perChannel(s, s.in(1), inner);
  perChannel(s, s.in(2), inner);
  requireShape(s, s.out(0), s.in(0).shape);
}

/// x, dy, scale -> dx, dscale, dbias, with `count` scale values.
static void normBackwardShapes(const StepView &s, int64_t count) {
  requireShape(s, s.in(1), s.in(0).shape);
  requireShape(s, s.out(0), s.in(0).shape);
  perChannel(s, s.in(2), count);
  perChannel(s, s.out(1), count);
  perChannel(s, s.out(2), count);
}

void batchNormBackward(const StepView &s) {
  requireFloats(s);
  normBackwardShapes(s, channelsOf(s, s.in(0)));
  normRelu(s);
}

void layerNormBackward(const StepView &s) {
  requireFloats(s);
  normBackwardShapes(s, normalisedOf(s, s.in(0)));
  DyAddend addend = dyAddendOf(s.step, s.attrs);
  if (addend.operand >= 0)
    requireShape(s, s.in(addend.operand), s.in(0).shape);
}

} // namespace ampc::rt::signature
