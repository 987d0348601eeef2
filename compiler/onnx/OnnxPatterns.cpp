// Forms exporters write out op by op that the graph dialect has as one op:
// found before the mapping, so that each imports as that op. Only GELU's erf
// form so far, as PyTorch writes it:
//   d = Div(x, sqrt 2); e = Erf(d); a = Add(e, 1); y = Mul(Mul(x, a), 0.5)
// (or Mul(Mul(x, 0.5), a)); operands of Add and Mul in either order, and
// every inner value read once and not a graph output.
#include <cmath>

#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

namespace {

class Matcher {
public:
  Matcher(Importer &im, const onnx::GraphProto &g) : im_(im) {
    for (const NodeProto &n : g.node()) {
      for (const std::string &o : n.output())
        producer_[o] = &n;
      for (const std::string &i : n.input())
        consumers_[i].push_back(&n);
    }
  }

  /// The node reading `v`, when it is the only reader and `v` is no output.
  const NodeProto *onlyConsumer(const std::string &v) {
    auto it = consumers_.find(v);
    if (it == consumers_.end() || it->second.size() != 1 || im_.graphOutputs.count(v))
      return nullptr;
    return it->second[0];
  }
  const NodeProto *producerOf(const std::string &v) {
    auto it = producer_.find(v);
    return it == producer_.end() ? nullptr : it->second;
  }
  /// The value of a one-element constant (a Constant node or an
  /// initializer), if `v` is one.
  std::optional<double> scalar(const std::string &v) {
    const NodeProto *p = producerOf(v);
    try {
      if (p && p->op_type() == "Constant") {
        const onnx::AttributeProto *a = im_.attr(*p, "value");
        if (a) {
          HostTensor t = readTensor(a->t(), v);
          if (t.data.size() == 1)
            return t.data[0];
        }
        return std::nullopt;
      }
      auto init = im_.initializers.find(v);
      if (init != im_.initializers.end()) {
        HostTensor t = readTensor(*init->second, v);
        if (t.data.size() == 1)
          return t.data[0];
      }
    } catch (const GraphError &) {
    }
    return std::nullopt;
  }
  /// For a binary `n` that reads `v`, its other operand.
  static std::optional<std::string> other(const NodeProto &n, const std::string &v) {
    if (n.input_size() != 2 || n.output_size() != 1)
      return std::nullopt;
    if (n.input(0) == v)
      return n.input(1);
    if (n.input(1) == v)
      return n.input(0);
    return std::nullopt;
  }
  bool isScalar(const std::string &v, double want) {
    std::optional<double> s = scalar(v);
    return s && std::fabs(*s - want) <= 4e-3 * std::fabs(want); // as close as bf16 gets
  }

  void geluErf(const NodeProto &erf) {
    if (erf.input_size() != 1 || erf.output_size() != 1)
      return;
    const NodeProto *div = producerOf(erf.input(0));
    if (!div || div->op_type() != "Div" || div->input_size() != 2 ||
        onlyConsumer(erf.input(0)) != &erf || !isScalar(div->input(1), std::sqrt(2.0)))
      return;
    const std::string &x = div->input(0);
    const NodeProto *add = onlyConsumer(erf.output(0));
    if (!add || add->op_type() != "Add")
      return;
    std::optional<std::string> one = other(*add, erf.output(0));
    if (!one || !isScalar(*one, 1.0))
      return;
    const NodeProto *mul = onlyConsumer(add->output(0));
    if (!mul || mul->op_type() != "Mul")
      return;
    std::optional<std::string> m = other(*mul, add->output(0));
    if (!m)
      return;
    const NodeProto *last = nullptr, *fifth = nullptr;
    if (*m == x) { // Mul(Mul(x, a), 0.5)
      last = onlyConsumer(mul->output(0));
      std::optional<std::string> half =
          last && last->op_type() == "Mul" ? other(*last, mul->output(0)) : std::nullopt;
      if (!half || !isScalar(*half, 0.5))
        return;
      fifth = last;
    } else { // Mul(Mul(x, 0.5), a)
      const NodeProto *h = producerOf(*m);
      std::optional<std::string> half =
          h && h->op_type() == "Mul" && onlyConsumer(*m) == mul ? other(*h, x) : std::nullopt;
      if (!half || !isScalar(*half, 0.5))
        return;
      last = mul;
      fifth = h;
    }
    for (const NodeProto *n : {div, &erf, add, mul, fifth})
      if (n != last)
        im_.skipped.insert(n);
    im_.gelus[last] = x;
  }

private:
  Importer &im_;
  std::map<std::string, const NodeProto *> producer_;
  std::map<std::string, std::vector<const NodeProto *>> consumers_;
};

} // namespace

void findPatterns(Importer &im, const onnx::GraphProto &g) {
  Matcher m(im, g);
  for (const NodeProto &n : g.node())
    if (n.op_type() == "Erf")
      m.geluErf(n);
}

} // namespace ampc::onnx_import
