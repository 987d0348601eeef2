// Kernel signatures of elementwise, movement, reduction and loss kernels,
// and the overlap rule (KernelSignatures.h). Matrix, convolution, pooling
// and normalisation kernels are in MatrixSignatures.cpp, training kernels
// in TrainingSignatures.cpp.
#include <cmath>

#include <algorithm>

#include "runtime/core/ElementChain.h"
#include "runtime/core/KernelTraits.h"
#include "runtime/core/SignatureUtil.h"

namespace ampc::rt {

void StepView::fail(const std::string &what) const {
  throw PlanError("step '" + step.name + "' (" + kernelName(step.kernel) + "): " + what);
}

namespace signature {

std::string shapeText(const Shape &shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(shape[i]);
  return s + "]";
}

/// Why an FP8 tensor is refused where a float one belongs.
static std::string fp8Hint(DType t) {
  return isFp8(t) ? std::string(" (") + dtypeName(t) +
                        " values are stored, not computed in: cast them to f32, f16 or bf16)"
                  : "";
}

void requireFloats(const StepView &s) {
  for (int id : s.step.inputs)
    s.require(isFloat(s.plan.buffers[id].dtype),
              "input '" + s.plan.buffers[id].name + "' must be a float tensor" +
                  fp8Hint(s.plan.buffers[id].dtype));
  for (int id : s.step.outputs)
    s.require(isFloat(s.plan.buffers[id].dtype),
              "output '" + s.plan.buffers[id].name + "' must be a float tensor" +
                  fp8Hint(s.plan.buffers[id].dtype));
}

void requireShape(const StepView &s, const Buffer &b, const Shape &shape) {
  s.require(b.shape == shape,
            "'" + b.name + "' is " + shapeText(b.shape) + ", expected " + shapeText(shape));
}

void requireSameSize(const StepView &s, const Buffer &a, const Buffer &b) {
  s.require(numElements(a.shape) == numElements(b.shape),
            "'" + a.name + "' " + shapeText(a.shape) + " and '" + b.name + "' " +
                shapeText(b.shape) + " differ in size");
}

std::optional<Shape> broadcastShape(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    out[i] = da == 1 ? db : da;
  }
  return out;
}

int64_t axisOf(const StepView &s, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  s.require(a >= 0 && a < rank,
            "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

Shape intsAttr(const StepView &s, const char *name, Shape dflt, size_t count, int64_t least) {
  Shape v = s.attrs.getInts(name, std::move(dflt));
  s.require(v.size() == count,
            std::string("attribute '") + name + "' needs " + std::to_string(count) + " values");
  for (int64_t x : v)
    s.require(x >= least && x <= (int64_t(1) << 40),
              std::string("attribute '") + name + "' has a value out of range");
  return v;
}

Shape padsAttr(const StepView &s) {
  Shape p = s.attrs.getInts("padding", {0, 0});
  s.require(p.size() == 2 || p.size() == 4, "attribute 'padding' needs 2 or 4 values");
  for (int64_t x : p)
    s.require(x >= 0 && x <= (int64_t(1) << 40), "attribute 'padding' has a value out of range");
  return p.size() == 2 ? Shape{p[0], p[0], p[1], p[1]} : p;
}

bool nhwcAttr(const StepView &s) {
  std::string layout = s.attrs.getStr("layout", "NHWC");
  s.require(layout == "NHWC" || layout == "NCHW", "layout must be NHWC or NCHW");
  return layout == "NHWC";
}

void binary(const StepView &s) {
  const Buffer &a = s.in(0), &b = s.in(1), &y = s.out(0);
  std::optional<Shape> shape = broadcastShape(a.shape, b.shape);
  s.require(shape.has_value(),
            "shapes " + shapeText(a.shape) + " and " + shapeText(b.shape) + " do not broadcast");
  requireShape(s, y, *shape);
  if (isStoredFloat(y.dtype))
    requireFloats(s);
  else
    s.require(a.dtype == y.dtype && b.dtype == y.dtype, "operands and result need one dtype");
}

void unary(const StepView &s) {
  requireFloats(s);
  requireShape(s, s.out(0), s.in(0).shape);
}

void elementwiseChain(const StepView &s) {
  requireFloats(s);
  const Buffer &y = s.out(0);
  for (size_t i = 0; i < s.step.inputs.size(); ++i) {
    std::optional<Shape> shape = broadcastShape(s.in(i).shape, y.shape);
    s.require(shape && *shape == y.shape,
              "'" + s.in(i).name + "' does not broadcast to the result");
  }
  // Output k is stored at each element's index in the first.
  for (size_t k = 1; k < s.step.outputs.size(); ++k)
    s.require(numElements(s.out(k).shape) == numElements(y.shape),
              "'" + s.out(k).name + "' and '" + y.name + "' differ in size");
  try {
    decodeChain(s.attrs, s.step.inputs.size(), s.step.outputs.size());
  } catch (const PlanError &e) {
    s.fail(e.what());
  }
}

void dropout(const StepView &s) {
  const Buffer &x = s.in(0), &y = s.out(0);
  s.require(isFloat(x.dtype) && x.dtype == y.dtype, "input and result need one float dtype");
  requireShape(s, y, x.shape);
  double rate = s.attrs.getF64("rate", 0.5);
  s.require(rate >= 0.0 && rate < 1.0, "rate must be in [0, 1)");
  if (s.step.inputs.size() > 1)
    s.require(s.in(1).dtype == DType::I64 && isScalar(s.in(1)),
              "the run counter must be an i64 scalar");
}

void cast(const StepView &s) { requireShape(s, s.out(0), s.in(0).shape); }

void fill(const StepView &s) {}

void copy(const StepView &s) {
  const Buffer &x = s.in(0), &y = s.out(0);
  s.require(x.dtype == y.dtype, "input and result need one dtype");
  requireSameSize(s, x, y);
}

void transpose(const StepView &s) {
  const Buffer &x = s.in(0), &y = s.out(0);
  Shape perm = s.attrs.getInts("perm");
  s.require(perm.size() == x.shape.size(), "perm needs one entry per dimension");
  Shape sorted = perm, shape;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    s.require(sorted[i] == (int64_t)i, "perm is not a permutation");
  for (int64_t p : perm)
    shape.push_back(x.shape[p]);
  s.require(x.dtype == y.dtype, "input and result need one dtype");
  requireShape(s, y, shape);
}

void concat(const StepView &s) {
  const Buffer &y = s.out(0);
  int64_t axis = axisOf(s, s.attrs.getInt("axis", 0), y.shape.size());
  int64_t total = 0;
  for (size_t i = 0; i < s.step.inputs.size(); ++i) {
    const Buffer &x = s.in(i);
    s.require(x.dtype == y.dtype && x.shape.size() == y.shape.size(),
              "'" + x.name + "' does not match the result's dtype and rank");
    for (size_t d = 0; d < y.shape.size(); ++d)
      s.require((int64_t)d == axis || x.shape[d] == y.shape[d],
                "'" + x.name + "' " + shapeText(x.shape) + " does not fit " + shapeText(y.shape));
    total += x.shape[axis];
  }
  s.require(total == y.shape[axis], "the inputs do not add up to the result along the axis");
}

/// `part` is a slice of `full` at the kernel's start (axes, starts).
void sliceOf(const StepView &s, const Buffer &full, const Buffer &part) {
  s.require(full.dtype == part.dtype && full.shape.size() == part.shape.size(),
            "the slice and its source need one dtype and rank");
  Shape axes = s.attrs.getInts("axes"), starts = s.attrs.getInts("starts");
  s.require(starts.size() >= axes.size(), "starts needs one value per axis");
  Shape begin(full.shape.size(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axisOf(s, axes[i], full.shape.size()), dim = full.shape[a], st = starts[i];
    st = st < 0 ? st + dim : st;
    begin[a] = std::min(std::max<int64_t>(st, 0), dim);
  }
  for (size_t d = 0; d < full.shape.size(); ++d)
    s.require(part.shape[d] >= 0 && begin[d] + part.shape[d] <= full.shape[d],
              "slice " + shapeText(part.shape) + " does not fit in " + shapeText(full.shape));
}

void slice(const StepView &s) { sliceOf(s, s.in(0), s.out(0)); }
void sliceBackward(const StepView &s) { sliceOf(s, s.out(0), s.in(0)); }

void embedding(const StepView &s) {
  const Buffer &ids = s.in(0), &w = s.in(1), &y = s.out(0);
  s.require(isIndex(ids), "ids must be i32 or i64");
  s.require(w.shape.size() == 2, "the table must be 2-D");
  Shape shape = ids.shape;
  shape.push_back(w.shape[1]);
  s.require(y.dtype == w.dtype, "the result needs the table's dtype");
  requireShape(s, y, shape);
}

void embeddingBackward(const StepView &s) {
  const Buffer &ids = s.in(0), &dy = s.in(1), &dw = s.out(0);
  s.require(isIndex(ids), "ids must be i32 or i64");
  s.require(isFloat(dy.dtype) && isFloat(dw.dtype) && dw.shape.size() == 2,
            "needs float gradients and a 2-D table gradient");
  Shape shape = ids.shape;
  shape.push_back(dw.shape[1]);
  requireShape(s, dy, shape);
}

void reduce(const StepView &s) {
  requireFloats(s);
  const Buffer &x = s.in(0), &y = s.out(0);
  Shape axes = s.attrs.getInts("axes");
  std::vector<bool> reduced(x.shape.size(), axes.empty());
  for (int64_t a : axes)
    reduced[axisOf(s, a, x.shape.size())] = true;
  int64_t kept = 1;
  for (size_t d = 0; d < x.shape.size(); ++d)
    kept *= reduced[d] ? 1 : x.shape[d];
  s.require(numElements(y.shape) == kept, "the result's size does not match the reduction");
}

void softmax(const StepView &s) {
  unary(s);
  axisOf(s, s.attrs.getInt("axis", -1), s.in(0).shape.size());
  s.attrs.foldedScale("input"); // throws for a bad rounding dtype
}

void softmaxBackward(const StepView &s) {
  requireFloats(s);
  requireShape(s, s.in(1), s.in(0).shape);
  requireShape(s, s.out(0), s.in(0).shape);
  axisOf(s, s.attrs.getInt("axis", -1), s.in(0).shape.size());
  s.attrs.foldedScale("output");
}

/// softmax_backward's operands with the logits first, along the last axis.
void softmaxLogitsBackward(const StepView &s) {
  softmaxBackward(s);
  s.require(!s.attrs.getBool("log", false), "a backward from logits is for softmax, not log_softmax");
  size_t rank = s.in(0).shape.size();
  s.require(axisOf(s, s.attrs.getInt("axis", -1), rank) + 1 == (int64_t)rank,
            "a backward from logits needs the last axis");
  s.attrs.foldedScale("input");
}

/// Logits [..., C], one label per row, and the class weights ([C], any
/// float dtype: a widening cast folds into the kernel) when input `weight`
/// is there.
void logitsAndLabels(const StepView &s, size_t weight) {
  const Buffer &logits = s.in(0), &labels = s.in(1);
  s.require(isFloat(logits.dtype) && !logits.shape.empty(), "logits must be a float tensor");
  s.require(isIndex(labels), "labels must be i32 or i64");
  int64_t classes = logits.shape.back();
  s.require(classes > 0, "logits need at least one class");
  s.require(numElements(labels.shape) == numElements(logits.shape) / classes,
            "one label per row of logits");
  if (s.step.inputs.size() > weight) {
    s.require(isFloat(s.in(weight).dtype), "the class weights must be floats");
    requireShape(s, s.in(weight), {classes});
  }
}

/// The reduction, checked: true for "none" (a loss a row, one per label).
static bool lossPerRow(const StepView &s) {
  std::string reduction = s.attrs.getStr("reduction", "mean");
  s.require(reduction == "mean" || reduction == "sum" || reduction == "none",
            "reduction must be \"mean\", \"sum\" or \"none\", got \"" + reduction + "\"");
  return reduction == "none";
}

/// The loss (or its gradient): a float scalar, or a float a label.
static void requireLoss(const StepView &s, const Buffer &loss, bool perRow, const char *what) {
  if (perRow)
    s.require(isFloat(loss.dtype) && numElements(loss.shape) == numElements(s.in(1).shape),
              std::string(what) + " must be floats, one a label (reduction \"none\")");
  else
    s.require(isFloatScalar(loss), std::string(what) + " must be a float scalar");
}

void crossEntropy(const StepView &s) {
  logitsAndLabels(s, 2);
  requireLoss(s, s.out(0), lossPerRow(s), "the loss");
}

void crossEntropyBackward(const StepView &s) {
  logitsAndLabels(s, 3);
  requireLoss(s, s.in(2), lossPerRow(s), "the loss gradient");
  s.require(isFloat(s.out(0).dtype), "the gradient must be a float tensor");
  requireShape(s, s.out(0), s.in(0).shape);
}

void mse(const StepView &s) {
  requireFloats(s);
  requireSameSize(s, s.in(0), s.in(1));
  s.require(isScalar(s.out(0)), "the loss must be a scalar");
}

void mseBackward(const StepView &s) {
  requireFloats(s);
  requireSameSize(s, s.in(0), s.in(1));
  s.require(isScalar(s.in(2)), "the loss gradient must be a scalar");
  requireShape(s, s.out(0), s.in(0).shape);
}

/// q [b, sq, h, d], k [b, sk, h, d], v [b, sk, h, dv] of one dtype (the
/// graph op's rule); y [b, sq, h, dv].
static Shape attentionOperands(const StepView &s, const AttentionOperands &a) {
  for (size_t i = 0; i < s.step.inputs.size(); ++i)
    s.require((int)i == a.counter || isFloat(s.in(i).dtype), "q, k, v (y, dy) must be floats");
  for (size_t i = 0; i < s.step.outputs.size(); ++i)
    s.require(isFloat(s.out(i).dtype), "the results must be floats");
  const Buffer &q = s.in(0), &k = s.in(1), &v = s.in(2);
  s.require(q.dtype == k.dtype && q.dtype == v.dtype, "q, k and v need one dtype");
  s.require(q.shape.size() == 4 && k.shape.size() == 4 && v.shape.size() == 4,
            "q, k and v must be [batch, seq, heads, head_dim]");
  s.require(k.shape[0] == q.shape[0] && k.shape[2] == q.shape[2] && k.shape[3] == q.shape[3] &&
                v.shape[0] == q.shape[0] && v.shape[1] == k.shape[1] && v.shape[2] == q.shape[2],
            "q " + shapeText(q.shape) + ", k " + shapeText(k.shape) + " and v " +
                shapeText(v.shape) + " do not fit one attention");
  if (a.bias >= 0) {
    const Shape &b = s.in(a.bias).shape;
    Shape full = {q.shape[0], q.shape[2], q.shape[1], k.shape[1]};
    bool fits = b.size() == 4;
    for (size_t d = 0; fits && d < 4; ++d)
      fits = b[d] == full[d] || b[d] == 1;
    s.require(fits, "the bias " + shapeText(b) + " does not broadcast to [batch, heads, seq_q, "
                    "seq_k] = " + shapeText(full));
  }
  s.require(q.shape[3] > 0, "head_dim must be at least 1");
  int64_t limit = s.plan.target.maxAttentionHeadDim;
  s.require(limit == 0 || (q.shape[3] <= limit && v.shape[3] <= limit),
            "head_dim " + std::to_string(std::max(q.shape[3], v.shape[3])) + " is above the " +
                std::to_string(limit) + " that the " + s.plan.target.name +
                " target's attention kernel takes (more heads of a smaller head_dim fit)");
  double scale = s.attrs.getF64("scale", 1.0);
  s.require(std::isfinite(scale) && scale != 0, "scale must be finite and nonzero");
  return {q.shape[0], q.shape[1], q.shape[2], v.shape[3]};
}

/// A result in the operands' dtype, or in f32 (the value before it is
/// rounded: what the precision doctor's range probes read).
static bool resultDtypeFits(const Buffer &result, const Buffer &operand) {
  return result.dtype == operand.dtype || result.dtype == DType::F32;
}

/// Each query row's log-sum-exp: f32 [batch, seq_q, heads].
static void requireLse(const StepView &s, const Buffer &lse) {
  const Buffer &q = s.in(0);
  s.require(lse.dtype == DType::F32, "the log-sum-exp must be f32");
  requireShape(s, lse, {q.shape[0], q.shape[1], q.shape[2]});
}

/// The run counter of an attention with dropout.
static void requireCounter(const StepView &s, const AttentionOperands &a) {
  if (a.counter >= 0)
    s.require(s.in(a.counter).dtype == DType::I64 && isScalar(s.in(a.counter)),
              "the run counter must be an i64 scalar");
}

void attention(const StepView &s) {
  AttentionOperands a = attentionOperandsOf(s.step, s.attrs);
  Shape y = attentionOperands(s, a);
  requireShape(s, s.out(0), y);
  s.require(resultDtypeFits(s.out(0), s.in(0)), "the result has the operands' dtype, or f32");
  if (s.step.outputs.size() > 1)
    requireLse(s, s.out(1));
  requireCounter(s, a);
}

void attentionBackward(const StepView &s) {
  AttentionOperands a = attentionOperandsOf(s.step, s.attrs);
  Shape y = attentionOperands(s, a);
  for (int i : {3, 4}) {
    requireShape(s, s.in(i), y);
    s.require(s.in(i).dtype == s.in(0).dtype, "y and dy have the operands' dtype");
  }
  if (a.lse >= 0)
    requireLse(s, s.in(a.lse));
  requireCounter(s, a);
  for (int i : {0, 1, 2}) {
    requireShape(s, s.out(i), s.in(i).shape);
    s.require(resultDtypeFits(s.out(i), s.in(i)), "each gradient has its operand's dtype, or f32");
  }
}

void broadcastTo(const StepView &s) {
  requireFloats(s);
  std::optional<Shape> shape = broadcastShape(s.in(0).shape, s.out(0).shape);
  s.require(shape && *shape == s.out(0).shape, "the input does not broadcast to the result");
}

void reduceTo(const StepView &s) {
  requireFloats(s);
  std::optional<Shape> shape = broadcastShape(s.out(0).shape, s.in(0).shape);
  s.require(shape && *shape == s.in(0).shape, "the result does not broadcast to the input");
}

void unaryBackward(const StepView &s) {
  unaryCallOf(s.step, s.attrs); // its function is one with a derivative
  requireFloats(s);
  for (size_t i = 1; i < 3; ++i)
    requireSameSize(s, s.in(0), s.in(i));
  requireSameSize(s, s.in(0), s.out(0));
}

void minmaxBackward(const StepView &s) {
  requireFloats(s);
  const Buffer &dy = s.in(2);
  for (size_t i = 0; i < 2; ++i) {
    std::optional<Shape> shape = broadcastShape(s.in(i).shape, dy.shape);
    s.require(shape && *shape == dy.shape, "'" + s.in(i).name + "' does not broadcast to dy");
    requireShape(s, s.out(i), dy.shape);
  }
}

} // namespace signature

void checkOverlaps(const StepView &s, unsigned flags) {
  auto range = [&](int id) {
    const Buffer &b = s.plan.buffers[id];
    return std::make_pair(b.isPersistent(), std::make_pair(b.offset, b.offset + b.bytes));
  };
  auto overlap = [&](int a, int b) { return buffersOverlap(s.plan, a, b); };
  auto same = [&](int a, int b) { return range(a) == range(b); };
  const std::vector<int> &ins = s.step.inputs, &outs = s.step.outputs;
  for (size_t o = 0; o < outs.size(); ++o) {
    for (size_t p = o + 1; p < outs.size(); ++p)
      s.require(!overlap(outs[o], outs[p]),
                "outputs '" + s.out(o).name + "' and '" + s.out(p).name + "' share memory");
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i] == outs[o] || !overlap(ins[i], outs[o]))
        continue;
      bool allowed = same(ins[i], outs[o]) && (flags & (kInPlace | kAliasesInput));
      if (flags & kInOrderList) // list entry i, consumed before output o is written
        allowed = i + 1 < ins.size() &&
                  (s.plan.target.inOrderLists ? i <= o : i == o && same(ins[i], outs[o]));
      s.require(allowed, "output '" + s.out(o).name + "' overlaps input '" + s.in(i).name +
                             "' where the kernel cannot work in place");
    }
  }
}

} // namespace ampc::rt
