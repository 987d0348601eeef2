// ONNX activations and reductions the graph dialect has no op of their own
// for, each composed of graph ops whose gradients compose to its own
// (docs/onnx.md, "Ops"): LeakyRelu, PRelu, Elu, Selu, Celu, Softplus,
// the Log of a sigmoid, Softsign, Mean, Reciprocal, ReduceSum,
// ReduceSumSquare, ReduceL2, ReduceMax and ReduceMin. No new kernel, so
// every backend runs them as it runs the ops they are made of.
#include <cmath>

#include "compiler/onnx/OnnxImporter.h"
#include "ops/GraphOps.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

/// The name of an intermediate value of node `n`'s composition.
std::string part(const NodeProto &n, const std::string &suffix) {
  return n.output(0) + "." + suffix;
}

Tensor scaled(Importer &im, const NodeProto &n, Tensor x, double scale, double bias,
              const std::string &out, const std::string &suffix) {
  Attrs a;
  a.set("scale", B(im).getF64FloatAttr(scale));
  a.set("bias", B(im).getF64FloatAttr(bias));
  return im.emit(n, "scale", {x}, a, out, suffix);
}

/// min(x, 0): the negative part, 0 elsewhere.
Tensor negativePart(Importer &im, const NodeProto &n, Tensor x) {
  return im.emit(n, "minimum", {x, im.fill(n, {}, 0.0, x, "zero")}, {}, part(n, "negative"),
                 "negative");
}

} // namespace

/// LeakyRelu: max(x, alpha x) for alpha in [0, 1] (x where x ≥ 0, alpha x
/// below), min(x, alpha x) above 1; relu(x) + alpha min(x, 0) otherwise.
void leakyRelu(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  double alpha = im.attrFloat(n, "alpha", 0.01);
  if (alpha >= 0) {
    Tensor ax = scaled(im, n, x, alpha, 0.0, part(n, "slope"), "slope");
    im.emit(n, alpha <= 1 ? "maximum" : "minimum", {x, ax});
    return;
  }
  Tensor r = im.emit(n, "relu", {x}, {}, part(n, "positive"), "positive");
  Tensor neg = scaled(im, n, negativePart(im, n, x), alpha, 0.0, part(n, "slope"), "slope");
  im.emit(n, "add", {r, neg});
}

/// PRelu: relu(x) + slope · min(x, 0); the slope (a param, broadcast as
/// ONNX broadcasts it) gets its gradient through the mul.
void prelu(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0), slope = im.input(n, 1);
  Tensor r = im.emit(n, "relu", {x}, {}, part(n, "positive"), "positive");
  Tensor neg = im.emit(n, "mul", {negativePart(im, n, x), slope}, {}, part(n, "slope"), "slope");
  im.emit(n, "add", {r, neg});
}

namespace {

/// gamma · (relu(x) + alpha (exp(min(x, 0) / width) - 1)): Elu (width 1,
/// gamma 1), Selu (width 1) and Celu (width alpha, gamma 1). The exp runs
/// on the negative part alone, so no positive x overflows it.
void exponentialUnit(Importer &im, const NodeProto &n, double alpha, double width,
                     double gamma) {
  Tensor x = im.input(n, 0);
  Tensor m = negativePart(im, n, x);
  if (width != 1)
    m = scaled(im, n, m, 1 / width, 0.0, part(n, "width"), "width");
  Tensor e = im.emit(n, "exp", {m}, {}, part(n, "exp"), "exp");
  Tensor tail = scaled(im, n, e, alpha, -alpha, part(n, "tail"), "tail");
  Tensor r = im.emit(n, "relu", {x}, {}, part(n, "positive"), "positive");
  if (gamma == 1) {
    im.emit(n, "add", {r, tail});
    return;
  }
  Tensor sum = im.emit(n, "add", {r, tail}, {}, part(n, "sum"), "sum");
  scaled(im, n, sum, gamma, 0.0, n.output(0), "");
}

} // namespace

void elu(Importer &im, const NodeProto &n) {
  exponentialUnit(im, n, im.attrFloat(n, "alpha", 1.0), 1.0, 1.0);
}

void selu(Importer &im, const NodeProto &n) {
  exponentialUnit(im, n, im.attrFloat(n, "alpha", 1.67326319217681884765625), 1.0,
                  im.attrFloat(n, "gamma", 1.05070102214813232421875));
}

void celu(Importer &im, const NodeProto &n) {
  double alpha = im.attrFloat(n, "alpha", 1.0);
  if (!(alpha > 0))
    throw im.fail(n, "alpha must be positive");
  exponentialUnit(im, n, alpha, alpha, 1.0);
}

namespace {

/// softplus(x) = relu(x) + log(1 + exp(x - 2 relu(x))), into `out`: never
/// overflows (the textbook log(1 + exp(x)) is inf from x = 89 in f32), as
/// x - 2 relu(x) is -|x| exactly; written without abs so that the
/// gradient at 0 is sigmoid(0) = 1/2 (abs's and relu's derivatives there
/// are 0 each, which would make it 0).
Tensor softplusOf(Importer &im, const NodeProto &n, Tensor x, const std::string &out) {
  Tensor r = im.emit(n, "relu", {x}, {}, part(n, "positive"), "positive");
  Tensor twice = scaled(im, n, r, -2.0, 0.0, part(n, "twice_positive"), "twice_positive");
  Tensor e = im.emit(n, "exp", {im.emit(n, "add", {x, twice}, {}, part(n, "neg_abs"), "neg_abs")},
                     {}, part(n, "exp"), "exp");
  Tensor l = im.emit(n, "log", {scaled(im, n, e, 1.0, 1.0, part(n, "one_plus"), "one_plus")},
                     {}, part(n, "log"), "log");
  return im.emit(n, "add", {r, l}, {}, out, out == n.output(0) ? "" : "softplus");
}

/// The x of a sigmoid(x) value: the operand of a graph.sigmoid.
std::optional<Tensor> sigmoidOperand(Tensor t) {
  auto s = mlir::dyn_cast_or_null<graph::SigmoidOp>(t.value().getDefiningOp());
  if (!s)
    return std::nullopt;
  return Tensor(s->getOperand(0));
}

/// Whether `t` is a const whose every element is `v`.
bool constOf(Tensor t, double v) {
  auto c = mlir::dyn_cast_or_null<graph::ConstOp>(t.value().getDefiningOp());
  auto values = c ? mlir::dyn_cast<mlir::DenseFPElementsAttr>(c.getValue()) : nullptr;
  return values && values.isSplat() && values.getSplatValue<llvm::APFloat>().convertToDouble() == v;
}

/// Marks an op the import may erase once nothing reads it.
void mayErase(Importer &im, mlir::Operation *op) {
  if (!llvm::is_contained(im.removable, op))
    im.removable.push_back(op);
}

} // namespace

/// Softplus: softplusOf (above).
void softplus(Importer &im, const NodeProto &n) { softplusOf(im, n, im.input(n, 0), n.output(0)); }

/// Log, where log(sigmoid(x)) and log(1 - sigmoid(x)), as PyTorch writes
/// binary_cross_entropy_with_logits out, are -softplus(-x) and
/// -softplus(x): the literal form is -inf, and the loss NaN, once sigmoid
/// rounds to 0 or 1 (|x| from about 17 in f32), where PyTorch's own loss is
/// finite (docs/onnx.md).
void logOf(Importer &im, const NodeProto &n) {
  Tensor in = im.input(n, 0);
  std::optional<Tensor> x = sigmoidOperand(in);
  bool complement = false;
  if (auto sub = mlir::dyn_cast_or_null<graph::SubOp>(in.value().getDefiningOp());
      !x && sub && constOf(Tensor(sub->getOperand(0)), 1.0) &&
      sub->getResult(0).getType() == sub->getOperand(1).getType()) {
    x = sigmoidOperand(Tensor(sub->getOperand(1)));
    complement = x.has_value();
    if (complement)
      mayErase(im, sub);
  }
  if (!x) {
    im.emit(n, "log", {in});
    return;
  }
  mayErase(im, (complement ? in.value().getDefiningOp()->getOperand(1) : in.value()).getDefiningOp());
  Tensor arg = complement ? *x : scaled(im, n, *x, -1.0, 0.0, part(n, "neg"), "neg");
  scaled(im, n, softplusOf(im, n, arg, part(n, "softplus")), -1.0, 0.0, n.output(0), "");
}

/// Softsign: x / (1 + |x|).
void softsign(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  Tensor a = im.emit(n, "abs", {x}, {}, part(n, "abs"), "abs");
  im.emit(n, "div", {x, scaled(im, n, a, 1.0, 1.0, part(n, "one_plus"), "one_plus")});
}

/// Mean of any number of inputs: their sum (a chain of adds) over n.
void mean(Importer &im, const NodeProto &n) {
  if (n.input_size() == 1)
    return im.alias(n, im.input(n, 0));
  Tensor sum = chained(im, n, "add", part(n, "sum"));
  scaled(im, n, sum, 1.0 / n.input_size(), 0.0, n.output(0), "");
}

void reciprocal(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  im.emit(n, "div", {im.fill(n, {}, 1.0, x, "one"), x});
}

/// A reduction's axes: the attribute, or input 1 from `inputFrom` (13 for
/// ReduceSum, 18 for the others); none means all unless
/// noop_with_empty_axes, which makes it the identity (an empty optional).
std::optional<std::vector<int64_t>> reduceAxes(Importer &im, const NodeProto &n, Tensor x,
                                               int64_t inputFrom) {
  std::vector<int64_t> axes = im.opset >= inputFrom
                                  ? (n.input_size() > 1 && !n.input(1).empty()
                                         ? im.intsInput(n, 1)
                                         : std::vector<int64_t>{})
                                  : im.attrInts(n, "axes").value_or(std::vector<int64_t>{});
  if (axes.empty() && im.attrInt(n, "noop_with_empty_axes", 0))
    return std::nullopt;
  for (int64_t &a : axes)
    a = normalizeAxis(im, n, a, x.rank());
  return axes;
}

namespace {

/// ReduceSum of `x` over the node's axes, written as `out`.
Tensor sumOver(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> axes,
               const std::string &out, const std::string &suffix) {
  Attrs a;
  a.set("axes", ints(im, axes));
  a.set("keepdims", B(im).getBoolAttr(im.attrInt(n, "keepdims", 1)));
  return im.emit(n, "reduce_sum", {x}, a, out, suffix);
}

/// ReduceSum (squares first) and ReduceL2 (a sqrt after): an identity
/// where noop_with_empty_axes leaves the input as it is.
void reduction(Importer &im, const NodeProto &n, bool square, bool root) {
  Tensor x = im.input(n, 0);
  std::optional<std::vector<int64_t>> axes =
      reduceAxes(im, n, x, square || root ? 18 : 13);
  if (!axes && root) // sqrt(x²) of each element
    return (void)im.emit(n, "abs", {x});
  if (square)
    x = im.emit(n, "square", {x}, {}, axes ? part(n, "squares") : n.output(0), "squares");
  if (!axes)
    return square ? void() : im.alias(n, x);
  if (!root)
    return (void)sumOver(im, n, x, *axes, n.output(0), "");
  im.emit(n, "sqrt", {sumOver(im, n, x, *axes, part(n, "sum"), "sum")});
}

} // namespace

/// ReduceMax (and ReduceMin, negated before and after): the reduced axes
/// moved last and merged into the window of one `max_pool2d` over a
/// [kept, 1, reduced, 1] view. Its gradient goes to each window's first
/// maximum, as torch.max(dim)'s does.
void extreme(Importer &im, const NodeProto &n, bool minimum) {
  Tensor x = im.input(n, 0);
  std::optional<std::vector<int64_t>> axes = reduceAxes(im, n, x, 18);
  if (!axes)
    return im.alias(n, x);
  std::vector<bool> reduced(x.rank(), axes->empty());
  for (int64_t a : *axes)
    reduced[a] = true;
  std::vector<int64_t> perm, result;
  int64_t kept = 1, window = 1;
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!reduced[d]) {
      perm.push_back(d);
      kept = product({kept, x.dim(d)});
    }
  for (int64_t d = 0; d < x.rank(); ++d)
    if (reduced[d]) {
      perm.push_back(d);
      window = product({window, x.dim(d)});
    }
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!reduced[d] || im.attrInt(n, "keepdims", 1))
      result.push_back(reduced[d] ? 1 : x.dim(d));
  if (minimum)
    x = im.emit(n, "neg", {x}, {}, part(n, "negated"), "negated");
  bool moved = false;
  for (size_t i = 0; i < perm.size(); ++i)
    moved = moved || perm[i] != (int64_t)i;
  if (moved) {
    Attrs t;
    t.set("perm", ints(im, perm));
    x = im.emit(n, "transpose", {x}, t, part(n, "reduced_last"), "reduced_last");
  }
  Attrs view, pool, back;
  view.set("shape", ints(im, {kept, 1, window, 1}));
  x = im.emit(n, "reshape", {x}, view, part(n, "windows"), "windows");
  pool.set("kernel", ints(im, {window, 1}));
  pool.set("strides", ints(im, {1, 1}));
  pool.set("padding", ints(im, {0, 0, 0, 0}));
  pool.set("layout", B(im).getStringAttr("NCHW"));
  x = im.emit(n, "max_pool2d", {x}, pool, part(n, "max"), "max");
  back.set("shape", ints(im, result));
  if (!minimum)
    return (void)im.emit(n, "reshape", {x}, back);
  x = im.emit(n, "reshape", {x}, back, part(n, "negated_min"), "negated_min");
  im.emit(n, "neg", {x});
}

void reduceMax(Importer &im, const NodeProto &n) { extreme(im, n, false); }
void reduceMin(Importer &im, const NodeProto &n) { extreme(im, n, true); }

void reduceSum(Importer &im, const NodeProto &n) { reduction(im, n, false, false); }
void reduceSumSquare(Importer &im, const NodeProto &n) { reduction(im, n, true, false); }
void reduceL2(Importer &im, const NodeProto &n) { reduction(im, n, true, true); }

} // namespace ampc::onnx_import
