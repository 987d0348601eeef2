// ONNX Einsum as graph ops (maxvit's attention writes its two matmuls so).
// Without an ellipsis or a label repeated in one operand, an einsum of two
// operands is one batched matmul: labels in both operands and the output
// are batch dimensions, labels in both but not the output are contracted,
// the others are the rows (first operand) and columns (second). Labels one
// operand alone has and the output lacks are summed first. Each operand is
// transposed to [batch, rows or columns, contracted] order only where its
// own order is neither that nor the one matmul's transpose flag reads,
// groups of several labels are merged by a reshape, and the product is
// reshaped and transposed to the output's order. Without contracted labels
// the einsum is an outer product, a broadcast `mul` as MatMul's K = 1 is
// (OnnxOps.cpp). One operand: a sum and a transpose.
#include "compiler/onnx/EinsumEquation.h"
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

/// The steps of one einsum, emitted at the end so that the last one writes
/// the node's output. Values: the operands (0, 1), then each step's result.
class Steps {
public:
  Steps(Importer &im, const NodeProto &n) : im_(im), n_(n) {}

  int add(const char *op, std::vector<int> in, Attrs attrs, std::string suffix) {
    steps_.push_back({op, std::move(in), std::move(attrs), std::move(suffix)});
    return n_.input_size() + (int)steps_.size() - 1;
  }
  int transpose(int v, const std::vector<int64_t> &perm, const std::string &suffix) {
    Attrs a;
    a.set("perm", ints(im_, perm));
    return add("transpose", {v}, a, suffix);
  }
  int reshape(int v, const std::vector<int64_t> &shape, const std::string &suffix) {
    Attrs a;
    a.set("shape", ints(im_, shape));
    return add("reshape", {v}, a, suffix);
  }
  int sum(int v, const std::vector<int64_t> &axes, const std::string &suffix) {
    Attrs a;
    a.set("axes", ints(im_, axes));
    return add("reduce_sum", {v}, a, suffix);
  }
  void emit(std::vector<Tensor> values) {
    if (steps_.empty())
      return im_.alias(n_, values[0]);
    for (size_t i = 0; i < steps_.size(); ++i) {
      Step &s = steps_[i];
      std::vector<Tensor> in;
      for (int v : s.in)
        in.push_back(values[v]);
      std::string out = i + 1 == steps_.size() ? n_.output(0) : n_.output(0) + "." + s.suffix;
      values.push_back(im_.emit(n_, s.op, in, s.attrs, out, s.suffix));
    }
  }

private:
  struct Step {
    const char *op;
    std::vector<int> in;
    Attrs attrs;
    std::string suffix;
  };
  Importer &im_;
  const NodeProto &n_;
  std::vector<Step> steps_;
};

/// An operand as the steps see it: its value and labels (one per dimension).
struct Operand {
  int value;
  std::string labels;
};

/// The positions in `from` of `labels`, in their order.
std::vector<int64_t> positions(const std::string &from, const std::string &labels) {
  std::vector<int64_t> p;
  for (char c : labels)
    p.push_back(from.find(c));
  return p;
}

std::string keep(const std::string &labels, const std::function<bool(char)> &wanted) {
  std::string r;
  for (char c : labels)
    if (wanted(c))
      r += c;
  return r;
}

} // namespace

void einsum(Importer &im, const NodeProto &n) {
  if (n.input_size() > 2)
    throw im.fail(n, "only one or two operands, one per term of the equation, are supported");
  std::vector<Tensor> values;
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < n.input_size(); ++i) {
    values.push_back(im.input(n, i));
    shapes.push_back(values.back().shape().vec());
  }
  EinsumEquation e;
  std::string wrong = parseEinsum(im.attrString(n, "equation", ""), shapes, e);
  if (!wrong.empty())
    throw im.fail(n, wrong);
  for (const std::string &t : e.terms)
    for (size_t d = 0; d < t.size(); ++d)
      if (t.find(t[d]) != d)
        throw im.fail(n, "label '" + std::string(1, t[d]) + "' repeats in term '" + t +
                             "' (a diagonal), which is not supported");
  const std::vector<std::string> &terms = e.terms;
  const std::string &out = e.out;
  auto inOut = [&](char c) { return out.find(c) != std::string::npos; };
  auto shapeOf = [&](const std::string &labels) { return e.shapeOf(labels); };
  auto product = [&](const std::string &labels) {
    int64_t p = 1;
    for (int64_t s : e.shapeOf(labels))
      p *= s;
    return p;
  };

  Steps steps(im, n);
  std::vector<Operand> ops;
  for (size_t i = 0; i < terms.size(); ++i) {
    Operand o{(int)i, terms[i]};
    // Labels of this operand alone that the output lacks: summed away first.
    std::string other = terms.size() == 2 ? terms[1 - i] : "";
    std::string summed = keep(o.labels, [&](char c) {
      return !inOut(c) && other.find(c) == std::string::npos;
    });
    if (!summed.empty()) {
      o.value = steps.sum(o.value, positions(o.labels, summed), "sum" + std::to_string(i));
      o.labels = keep(o.labels, [&](char c) { return summed.find(c) == std::string::npos; });
    }
    ops.push_back(o);
  }
  Operand result = ops[0];
  if (ops.size() == 2) {
    Operand &a = ops[0], &b = ops[1];
    auto inB = [&](char c) { return b.labels.find(c) != std::string::npos; };
    auto inA = [&](char c) { return a.labels.find(c) != std::string::npos; };
    std::string batch = keep(a.labels, [&](char c) { return inB(c) && inOut(c); });
    std::string contracted = keep(a.labels, [&](char c) { return inB(c) && !inOut(c); });
    std::string rows = keep(a.labels, [&](char c) { return !inB(c); });
    std::string cols = keep(b.labels, [&](char c) { return !inA(c); });
    // Each operand in [batch, free, contracted] or [batch, contracted, free] order.
    auto arrange = [&](Operand &o, const std::string &free, const char *name) {
      if (o.labels == batch + contracted + free)
        return true; // transposed form: [.., K, free] for a, read with the flag
      if (o.labels != batch + free + contracted) {
        o.value = steps.transpose(o.value, positions(o.labels, batch + free + contracted), name);
        o.labels = batch + free + contracted;
      }
      return false;
    };
    if (contracted.empty()) { // an outer product: a broadcast mul, as for MatMul
      std::vector<int64_t> sa = shapeOf(batch), sb = shapeOf(batch);
      sa.insert(sa.end(), {product(rows), 1});
      sb.insert(sb.end(), {1, product(cols)});
      arrange(a, rows, "a_order");
      arrange(b, cols, "b_order");
      int column = steps.reshape(a.value, sa, "a_column"), row = steps.reshape(b.value, sb, "b_row");
      result = {steps.add("mul", {column, row}, {}, "outer"), batch + rows + cols};
      result.value = steps.reshape(result.value, shapeOf(result.labels), "unmerged");
      if (result.labels != out)
        result.value = steps.transpose(result.value, positions(result.labels, out), "order");
      return steps.emit(values);
    }
    bool aContractedFirst = arrange(a, rows, "a_order");
    bool bFreeLast = arrange(b, cols, "b_order"); // [.., K, N]: matmul's own form
    // Groups of labels other than one merge into one dimension (M, K or N).
    bool merge = rows.size() != 1 || contracted.size() != 1 || cols.size() != 1;
    if (merge) {
      std::vector<int64_t> sa = shapeOf(batch), sb = shapeOf(batch);
      int64_t m = product(rows), k = product(contracted), nn = product(cols);
      sa.insert(sa.end(), aContractedFirst ? std::initializer_list<int64_t>{k, m}
                                           : std::initializer_list<int64_t>{m, k});
      sb.insert(sb.end(), bFreeLast ? std::initializer_list<int64_t>{k, nn}
                                    : std::initializer_list<int64_t>{nn, k});
      a.value = steps.reshape(a.value, sa, "a_matrix");
      b.value = steps.reshape(b.value, sb, "b_matrix");
    }
    Attrs t;
    t.set("transpose_a", B(im).getBoolAttr(aContractedFirst));
    t.set("transpose_b", B(im).getBoolAttr(!bFreeLast));
    result = {steps.add("matmul", {a.value, b.value}, t, "matmul"), batch + rows + cols};
    if (merge)
      result.value = steps.reshape(result.value, shapeOf(result.labels), "unmerged");
  }
  if (result.labels != out)
    result.value = steps.transpose(result.value, positions(result.labels, out), "order");
  steps.emit(values);
}

} // namespace ampc::onnx_import
