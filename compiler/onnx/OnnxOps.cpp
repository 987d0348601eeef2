// ONNX ops as graph ops (docs/onnx.md lists them, with what each supports):
// elementwise, data movement, the table; the network ops are OnnxNnOps.cpp.
// Attributes the graph dialect has no counterpart for are refused with an
// error naming the node, never dropped.
#include "compiler/onnx/OnnxFold.h"
#include "compiler/onnx/OnnxImporter.h"

#include "llvm/Support/xxhash.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::onnx_import {
namespace {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

Mapping unary(const char *op) {
  return [op](Importer &im, const NodeProto &n) { im.emit(n, op, {im.input(n, 0)}); };
}

Mapping binary(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    if (n.input_size() != 2)
      throw im.fail(n, "takes 2 inputs, got " + std::to_string(n.input_size()));
    im.emit(n, op, {im.input(n, 0), im.input(n, 1)});
  };
}

/// Max, Min and Sum take any number of inputs: a chain of two-input ops.
Mapping variadic(const char *op) {
  return [op](Importer &im, const NodeProto &n) {
    if (n.input_size() == 1)
      return im.alias(n, im.input(n, 0));
    chained(im, n, op, n.output(0));
  };
}

/// A MatMul whose inner dimension is 1 is an outer product: one product an
/// element and no sum, so a broadcast `mul` ([.., M, 1] * [.., 1, N] has
/// matmul's batch broadcasting) with no GEMM launch. As a `mul` it is gray
/// and follows its operands: the angles of rotary position embeddings
/// (positions times inverse frequencies) stay f32 under AMP, where a GEMM
/// would be white and round them to f16.
void matmul(Importer &im, const NodeProto &n) {
  if (n.input_size() != 2)
    throw im.fail(n, "takes 2 inputs, got " + std::to_string(n.input_size()));
  Tensor a = im.input(n, 0), b = im.input(n, 1);
  bool outer = a.rank() >= 2 && b.rank() >= 2 && a.dim(a.rank() - 1) == 1 &&
               b.dim(b.rank() - 2) == 1;
  im.emit(n, outer ? "mul" : "matmul", {a, b});
}

void pow(Importer &im, const NodeProto &n) {
  const HostTensor *e = im.constantInput(n, 1);
  if (!e || e->data.size() != 1)
    throw im.fail(n, "only a constant scalar exponent is supported");
  Attrs a;
  a.set("exponent", B(im).getF64FloatAttr(e->data[0]));
  im.emit(n, "pow", {im.input(n, 0)}, a);
}

void reshapeTo(Importer &im, const NodeProto &n, Tensor x, llvm::ArrayRef<int64_t> shape) {
  Attrs a;
  a.set("shape", ints(im, shape));
  im.emit(n, "reshape", {x}, a);
}

void reshape(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, reshapeTarget(im, n, x.shape(), im.intsInput(n, 1)));
}

void flatten(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  int64_t axis = im.attrInt(n, "axis", 1);
  axis = axis == x.rank() ? axis : normalizeAxis(im, n, axis, x.rank());
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < x.rank(); ++i)
    (i < axis ? outer : inner) = product({i < axis ? outer : inner, x.dim(i)});
  reshapeTo(im, n, x, {outer, inner});
}

void transpose(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::vector<int64_t> perm;
  for (int64_t i = x.rank() - 1; i >= 0; --i)
    perm.push_back(i);
  Attrs a;
  a.set("perm", ints(im, im.attrInts(n, "perm").value_or(perm)));
  im.emit(n, "transpose", {x}, a);
}

void concat(Importer &im, const NodeProto &n) {
  std::vector<Tensor> xs;
  for (int i = 0; i < n.input_size(); ++i)
    xs.push_back(im.input(n, i));
  if (xs.empty())
    throw im.fail(n, "needs inputs");
  Attrs a;
  a.set("axis", B(im).getI64IntegerAttr(
                    normalizeAxis(im, n, im.attrInt(n, "axis", 0), xs[0].rank())));
  im.emit(n, "concat", xs, a);
}

} // namespace

Tensor chained(Importer &im, const NodeProto &n, const char *op, const std::string &out) {
  if (n.input_size() < 1)
    throw im.fail(n, "needs an input");
  Tensor acc = im.input(n, 0);
  for (int i = 1; i < n.input_size(); ++i) {
    bool last = i + 1 == n.input_size();
    acc = im.emit(n, op, {acc, im.input(n, i)}, {},
                  last ? out : n.output(0) + "." + std::to_string(i), last ? "" : std::to_string(i));
  }
  return acc;
}

/// Expand of a graph value: an add of zeros of the broadcast shape (its
/// gradient sums back); Expand of constants folds at import.
void expand(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::vector<int64_t> target = im.intsInput(n, 1);
  std::optional<std::vector<int64_t>> shape =
      broadcastShape({x.shape().vec(), target});
  if (!shape)
    throw im.fail(n, "cannot broadcast the input to the shape");
  if (*shape == x.shape().vec())
    return im.alias(n, x);
  im.emit(n, "add", {x, im.fill(n, *shape, 0.0, x, "zeros")});
}

namespace {

/// Slice; a step s > 1 on an axis takes every s-th element: the range is
/// padded to a multiple of s, split into [n, s] and the first of each kept.
void slice(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  SliceRanges r = sliceRanges(im, n, x.shape());
  std::vector<size_t> strided;
  for (size_t i = 0; i < r.axes.size(); ++i)
    if (r.steps[i] < 0)
      throw im.fail(n, "negative steps are supported only on constants known at import time");
    else if (r.steps[i] > 1 && r.ends[i] - r.starts[i] > 1)
      strided.push_back(i);
  Attrs a;
  a.set("axes", ints(im, r.axes));
  a.set("starts", ints(im, r.starts));
  a.set("ends", ints(im, r.ends));
  if (strided.empty())
    return (void)im.emit(n, "slice", {x}, a);
  const std::string &out = n.output(0);
  x = im.emit(n, "slice", {x}, a, out + ".range", "range");
  for (size_t i : strided) {
    std::string base = out + ".axis" + std::to_string(r.axes[i]);
    x = everyStep(im, n, x, r.axes[i], r.steps[i], base, i == strided.back() ? out : base + "_every");
  }
}

} // namespace

Tensor everyStep(Importer &im, const NodeProto &n, Tensor x, int64_t d, int64_t step,
                 const std::string &base, const std::string &out) {
  int64_t length = x.dim(d), size = (length + step - 1) / step;
  std::string axis = "axis" + std::to_string(d);
  std::vector<int64_t> zeros(x.rank(), 0), after(x.rank(), 0);
  after[d] = size * step - length;
  if (after[d])
    x = padded(im, n, x, zeros, after, 0.0, base + "_whole");
  std::vector<int64_t> groups = x.shape().vec(), result = x.shape().vec();
  groups[d] = size;
  groups.insert(groups.begin() + d + 1, step);
  result[d] = size;
  Attrs split, first, back;
  split.set("shape", ints(im, groups));
  x = im.emit(n, "reshape", {x}, split, base + "_groups", axis + "_groups");
  first.set("axes", ints(im, {d + 1}));
  first.set("starts", ints(im, {0}));
  first.set("ends", ints(im, {1}));
  x = im.emit(n, "slice", {x}, first, base + "_firsts", axis + "_firsts");
  back.set("shape", ints(im, result));
  return im.emit(n, "reshape", {x}, back, out, axis + "_every");
}

namespace {

/// Gather: a lookup in a 2-D table along axis 0 is an embedding; constant
/// indices select with a slice (one index) otherwise.
void gather(Importer &im, const NodeProto &n) {
  Tensor data = im.input(n, 0);
  int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), data.rank());
  const HostTensor *index = im.constantInput(n, 1);
  if (index && index->data.size() == 1) {
    int64_t i = toInt64(index->data[0]);
    int64_t dim = data.dim(axis);
    if (i < -dim || i >= dim)
      throw im.fail(n, "index " + std::to_string(i) + " is out of range");
    i = i < 0 ? i + dim : i;
    Attrs a;
    a.set("axes", ints(im, {axis}));
    a.set("starts", ints(im, {i}));
    a.set("ends", ints(im, {i + 1}));
    Tensor s = im.emit(n, "slice", {data}, a, n.output(0) + ".slice", "slice");
    std::vector<int64_t> shape = data.shape().vec();
    shape.erase(shape.begin() + axis);
    for (size_t k = 0; k < index->shape.size(); ++k)
      shape.insert(shape.begin() + axis, 1);
    reshapeTo(im, n, s, shape);
    return;
  }
  if (axis != 0 || data.rank() != 2)
    throw im.fail(n, "only a lookup in a 2-D table along axis 0 (an embedding) or one "
                     "constant index is supported");
  im.emit(n, "embedding", {im.input(n, 1), data});
}

void unsqueeze(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, unsqueezed(im, n, x.shape()));
}

void squeeze(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  reshapeTo(im, n, x, squeezed(im, n, x.shape()));
}

void reduceMean(Importer &im, const NodeProto &n) {
  Tensor x = im.input(n, 0);
  std::optional<std::vector<int64_t>> axes = reduceAxes(im, n, x, 18);
  if (!axes)
    return im.alias(n, x);
  Attrs a;
  a.set("axes", ints(im, *axes));
  a.set("keepdims", B(im).getBoolAttr(im.attrInt(n, "keepdims", 1)));
  im.emit(n, "reduce_mean", {x}, a);
}

void cast(Importer &im, const NodeProto &n) {
  std::optional<std::string> to = dtypeOf((int)im.attrInt(n, "to", 0));
  if (!to)
    throw im.fail(n, "casts to ONNX data type " + std::to_string(im.attrInt(n, "to", 0)) +
                         " are not supported");
  Attrs a;
  a.set("to", mlir::TypeAttr::get(graph::parseDtype(&im.b.context(), *to)));
  im.emit(n, "cast", {im.input(n, 0)}, a);
}

/// CastLike (PyTorch 2's exporters write it): a Cast to input 1's dtype.
void castLike(Importer &im, const NodeProto &n) {
  std::optional<std::string> to =
      n.input_size() > 1 ? im.dtypeOfValue(n.input(1)) : std::nullopt;
  if (!to)
    throw im.fail(n, "input 1 (target_type) is missing or unknown");
  Attrs a;
  a.set("to", mlir::TypeAttr::get(graph::parseDtype(&im.b.context(), *to)));
  im.emit(n, "cast", {im.input(n, 0)}, a);
}

void identity(Importer &im, const NodeProto &n) {
  // An initializer's alias (exporters write them for tied or equal values)
  // becomes a param of its own, named as the model names it.
  auto init = im.initializers.find(n.input(0));
  if (init != im.initializers.end() && !im.initializers.count(n.output(0))) {
    im.initializers[n.output(0)] = init->second; // made when first used
    return;
  }
  im.alias(n, im.input(n, 0));
}

void dropout(Importer &im, const NodeProto &n) {
  // PyTorch names the mask even where nothing reads it.
  if (n.output_size() > 1 && (im.read.count(n.output(1)) || im.graphOutputs.count(n.output(1))))
    throw im.fail(n, "the mask output is read, which is not supported");
  // A rate of 0 is the identity in training too (swin's F.dropout(p=0.0)).
  const HostTensor *training = im.constantInput(n, 2), *ratio = im.constantInput(n, 1);
  bool noRate = ratio && ratio->data.size() == 1 && ratio->data[0] == 0;
  if (noRate || !training || training->data.empty() || training->data[0] == 0) {
    if (!noRate && n.input_size() > 2 && !n.input(2).empty() && !training)
      throw im.fail(n, "training_mode must be a constant known at import time");
    im.alias(n, im.input(n, 0));
    return;
  }
  // Training mode (PyTorch's TrainingMode.TRAINING): the module's dropout,
  // which drops in `ampc train` and is the identity in `ampc run`
  // (docs/onnx.md). Each node draws its own stream: its seed is a hash of
  // its name, so that layers of one shape never share masks.
  if (n.input_size() > 1 && !n.input(1).empty() && (!ratio || ratio->data.size() != 1))
    throw im.fail(n, "the ratio must be one constant known at import time");
  double rate = ratio ? ratio->data[0] : 0.5; // as stored, like every float attribute
  if (!(rate >= 0 && rate < 1))
    throw im.fail(n, "the ratio must be in [0, 1), got " + std::to_string(rate));
  Attrs a;
  a.set("rate", B(im).getF64FloatAttr(rate));
  a.set("seed", B(im).getI64IntegerAttr(llvm::xxh3_64bits(im.nodeName(n)) >> 1));
  im.emit(n, "dropout", {im.input(n, 0)}, a, n.output(0));
}

/// SoftmaxCrossEntropyLoss's class weights (input 2): an initializer (PyTorch
/// writes a buffer as one) becomes an f32 const, never trained; a graph
/// input is fed as it is.
Tensor classWeights(Importer &im, const NodeProto &n) {
  const std::string &name = n.input(2);
  if (!im.tensors.count(name))
    if (const HostTensor *w = im.constantInput(n, 2))
      im.tensors[name] = im.b.constValue(name, w->shape, w->data, "f32");
  return im.input(n, 2);
}

/// SoftmaxCrossEntropyLoss: softmax_cross_entropy of `scores` (with its
/// ignore_index, which PyTorch always writes: -100, its class weights and
/// its reduction), the graph's loss when it is a graph output and reduced.
/// With the reduction "none" it is a loss a row, [N, d1, ...], which the
/// graph goes on to weigh and reduce. ONNX's scores are [N, C, d1, ...]:
/// the classes move to the last axis.
void crossEntropyOf(Importer &im, const NodeProto &n, Tensor scores) {
  std::string reduction = im.attrString(n, "reduction", "mean");
  if (reduction != "mean" && reduction != "sum" && reduction != "none")
    throw im.fail(n, "the reduction '" + reduction +
                         "' is not one of ONNX's: 'mean', 'sum' or 'none'");
  if (scores.rank() > 2)
    scores = classesLast(im, scores, 1, n.output(0) + ".classes_last");
  Attrs a;
  if (const onnx::AttributeProto *ignore = im.attr(n, "ignore_index"))
    a.set("ignore_index", B(im).getI64IntegerAttr(ignore->i()));
  if (reduction != "mean")
    a.set("reduction", B(im).getStringAttr(reduction));
  std::vector<Tensor> operands = {scores, im.input(n, 1)};
  if (n.input_size() > 2 && !n.input(2).empty())
    operands.push_back(classWeights(im, n));
  im.emit(n, "softmax_cross_entropy", operands, a);
  if (reduction != "none" && im.graphOutputs.count(n.output(0)))
    im.lossOutput = n.output(0);
}

void crossEntropy(Importer &im, const NodeProto &n) { crossEntropyOf(im, n, im.input(n, 0)); }

/// NegativeLogLikelihoodLoss of a LogSoftmax over the classes (PyTorch's
/// `F.nll_loss(F.log_softmax(x, 1), y)`): the cross entropy of the
/// log-probabilities, whose softmax is the probabilities, so the loss and
/// its gradients are NLL's (docs/onnx.md). Other inputs are refused.
void nllLoss(Importer &im, const NodeProto &n) {
  Tensor logProbs = im.input(n, 0);
  auto logSoftmax = mlir::dyn_cast_or_null<graph::LogSoftmaxOp>(logProbs.value().getDefiningOp());
  if (!logSoftmax || logSoftmax.getAxis() != 1) // the LogSoftmax mapping normalises its axis
    throw im.fail(n, "reads log-probabilities: supported after a LogSoftmax over the classes "
                     "(axis 1), where it is that LogSoftmax's cross entropy");
  crossEntropyOf(im, n, logProbs);
}

/// Ops only ever folded: reaching the mapping means an input was not known.
void needsConstants(Importer &im, const NodeProto &n) {
  throw im.fail(n, "is supported only on constants known at import time");
}

} // namespace

const std::map<std::string, Mapping> &mappings() {
  static const std::map<std::string, Mapping> table = {
      {"Gemm", gemm},
      {"MatMul", matmul},
      {"Conv", liftedToImage(conv, Lift::WindowAndFilter1d, convVolume)},
      {"BatchNormalization",
       keptDepthFirst(liftedToImage(batchNorm, Lift::SameShape), DepthFirst::BatchNorm)},
      {"LayerNormalization", layerNorm},
      {"Relu", keptDepthFirst(unary("relu"), DepthFirst::Unary)},
      {"Sigmoid", unary("sigmoid")},
      {"Tanh", unary("tanh")},
      {"Erf", unary("erf")},
      {"Sqrt", unary("sqrt")},
      {"Exp", unary("exp")},
      {"Log", logOf},
      {"Sin", unary("sin")},
      {"Cos", unary("cos")},
      {"Neg", unary("neg")},
      {"Abs", unary("abs")},
      {"Add", keptDepthFirst(binary("add"), DepthFirst::Binary)},
      {"Sub", binary("sub")},
      {"Mul", binary("mul")},
      {"Div", binary("div")},
      {"Pow", pow},
      {"ReduceMean", reduceMean},
      {"ReduceSum", reduceSum},
      {"ReduceSumSquare", reduceSumSquare},
      {"ReduceL2", reduceL2},
      {"ReduceMax", reduceMax},
      {"ReduceMin", reduceMin},
      {"LeakyRelu", keptDepthFirst(leakyRelu, DepthFirst::Unary)},
      {"PRelu", prelu},
      {"Elu", elu},
      {"Selu", selu},
      {"Celu", celu},
      {"Softplus", softplus},
      {"Reciprocal", reciprocal},
      {"Softsign", softsign},
      {"Sum", variadic("add")},
      {"Mean", mean},
      {"GlobalMaxPool", liftedToImage(globalMaxPool, Lift::GlobalPool)},
      {"DepthToSpace", depthToSpace},
      {"SpaceToDepth", spaceToDepth},
      {"Tile", tile},
      {"InstanceNormalization", instanceNorm},
      {"Resize", resize},
      {"LSTM", lstm},
      {"GRU", gru},
      {"RNN", rnn},
      {"Upsample", resize},
      {"ConvTranspose", liftedToImage(convTranspose, Lift::WindowAndFilter1d, convTransposeVolume)},
      {"Softmax", softmax("softmax")},
      {"LogSoftmax", softmax("log_softmax")},
      {"MaxPool", liftedToImage(pool("max_pool2d"), Lift::Window1d, poolVolume)},
      {"AveragePool", liftedToImage(pool("avg_pool2d"), Lift::Window1d, poolVolume)},
      {"GlobalAveragePool", liftedToImage(globalAvgPool, Lift::GlobalPool)},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Transpose", transpose},
      {"Concat", keptDepthFirst(concat, DepthFirst::Concat)},
      {"Slice", slice},
      {"Gather", gather},
      {"Unsqueeze", unsqueeze},
      {"Squeeze", squeeze},
      {"Cast", cast},
      {"CastLike", castLike},
      {"Size", needsConstants},
      {"Constant", needsConstants},
      {"Identity", identity},
      {"Dropout", dropout},
      {"SoftmaxCrossEntropyLoss", crossEntropy},
      {"NegativeLogLikelihoodLoss", nllLoss},
      {"Max", variadic("maximum")},
      {"Min", variadic("minimum")},
      {"Shape", needsConstants},
      {"ConstantOfShape", needsConstants},
      {"Range", needsConstants},
      {"Clip", clip},
      {"HardSigmoid", hardSigmoidOp},
      {"HardSwish", hardSwish},
      {"Pad", pad},
      {"Expand", expand},
      {"Einsum", einsum},
      {"Equal", needsConstants},
      {"Less", needsConstants},
      {"Greater", needsConstants},
      {"Not", needsConstants},
      {"And", needsConstants},
      {"Or", needsConstants},
      {"Xor", needsConstants},
      {"LessOrEqual", needsConstants},
      {"GreaterOrEqual", needsConstants},
      {"Floor", needsConstants},
      {"Ceil", needsConstants},
      {"Round", needsConstants},
      {"Sign", needsConstants},
      {"Where", where},
      {"Split", split},
      {"Trilu", needsConstants},
      {"Mod", needsConstants},
      {"ScatterND", needsConstants},
  };
  return table;
}

} // namespace ampc::onnx_import
