// Forms exporters write out op by op that the graph dialect has as one op:
// found before the mapping, so that each imports as that op. GELU, in both
// forms PyTorch writes:
//   erf:  d = Div(x, sqrt 2); f = Erf(d)
//   tanh: f = Tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, x^3)))), with x^3 as
//         Pow(x, 3) or Mul(x, Mul(x, x))
// then a = Add(f, 1); y = Mul(Mul(x, a), 0.5) (or Mul(Mul(x, 0.5), a));
// operands of Add and Mul in either order, and every inner value read once
// and not a graph output. (Op by op, the tanh form's Pow is a black op: one
// gelu keeps the FFN in L at O1.) With --fuse-attention, attention as
// PyTorch writes it: Softmax(MatMul(q, Transpose(k)) [scaled]) read by
// MatMul(., v), q possibly scaled first (PyTorch 1.13 divides q by
// sqrt(d)); the scales constants, k rank 3 or 4 through any Transpose
// (PyTorch folds its head split into k's), every inner value read once;
// and a masked_fill of the scaled scores before the Softmax (a Where with
// a -inf fill, as nanoGPT writes its causal mask), fused as causal when
// the mask is (else as a bias, where its condition is known at import), or
// an Add of a mask or bias to them, which the fused op takes as its bias
// (OnnxAttention.cpp, fusedAttention).
#include <algorithm>
#include <cmath>

#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

namespace {

class Matcher {
public:
  Matcher(Importer &im, const onnx::GraphProto &g) : im_(im) {
    for (const NodeProto &n : g.node()) {
      order_[&n] = (int)order_.size();
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

  /// GELU's shared tail: from `f` (erf(x/sqrt 2) or tanh(...)), a =
  /// Add(f, 1), then Mul(Mul(x, a), 0.5) or Mul(Mul(x, 0.5), a). On a match,
  /// marks `inner` and the tail's nodes but the last skipped, and the last a
  /// GELU of x.
  void tail(const NodeProto &f, const std::string &x, std::vector<const NodeProto *> inner,
            bool approximate) {
    const NodeProto *add = onlyConsumer(f.output(0));
    if (!add || add->op_type() != "Add")
      return;
    std::optional<std::string> one = other(*add, f.output(0));
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
    inner.insert(inner.end(), {&f, add, mul, fifth});
    for (const NodeProto *n : inner)
      if (n != last)
        im_.skipped.insert(n);
    im_.gelus[last] = {x, approximate};
  }

  /// erf(Div(x, sqrt 2)), then the tail.
  void geluErf(const NodeProto &erf) {
    if (erf.input_size() != 1 || erf.output_size() != 1)
      return;
    const NodeProto *div = producerOf(erf.input(0));
    if (!div || div->op_type() != "Div" || div->input_size() != 2 ||
        onlyConsumer(erf.input(0)) != &erf || !isScalar(div->input(1), std::sqrt(2.0)))
      return;
    tail(erf, div->input(0), {div}, false);
  }

  /// The nodes that make `v` = x^3: Pow(x, 3), or Mul(x, Mul(x, x)) in
  /// either order (PyTorch 1.13's form); empty when it is neither.
  std::vector<const NodeProto *> cubeOf(const std::string &v, const std::string &x) {
    const NodeProto *n = producerOf(v);
    if (!n || n->input_size() != 2 || n->output_size() != 1)
      return {};
    if (n->op_type() == "Pow")
      return n->input(0) == x && isScalar(n->input(1), 3.0) ? std::vector{n}
                                                            : std::vector<const NodeProto *>{};
    if (n->op_type() != "Mul")
      return {};
    for (int i = 0; i < 2; ++i) {
      const NodeProto *square = producerOf(n->input(1 - i));
      if (n->input(i) == x && square && square->op_type() == "Mul" &&
          square->input_size() == 2 && square->input(0) == x && square->input(1) == x &&
          onlyConsumer(n->input(1 - i)) == n)
        return {square, n};
    }
    return {};
  }

  /// tanh(Mul(sqrt(2/pi), Add(x, Mul(0.044715, Pow(x, 3))))), then the tail:
  /// the tanh form, as PyTorch writes nn.GELU(approximate="tanh").
  void geluTanh(const NodeProto &tanh) {
    if (tanh.input_size() != 1 || tanh.output_size() != 1 ||
        onlyConsumer(tanh.input(0)) != &tanh)
      return;
    const NodeProto *scaled = producerOf(tanh.input(0));
    if (!scaled || scaled->op_type() != "Mul" || scaled->input_size() != 2)
      return;
    for (int s = 0; s < 2; ++s) {
      if (!isScalar(scaled->input(s), 0.7978845608028654))
        continue;
      const std::string &a = scaled->input(1 - s);
      const NodeProto *add = producerOf(a);
      if (!add || add->op_type() != "Add" || add->input_size() != 2 || onlyConsumer(a) != scaled)
        return;
      for (int c = 0; c < 2; ++c) { // which operand of the Add is x
        const std::string &x = add->input(1 - c), &k = add->input(c);
        const NodeProto *kappa = producerOf(k);
        if (!kappa || kappa->op_type() != "Mul" || kappa->input_size() != 2 ||
            onlyConsumer(k) != add)
          continue;
        std::optional<std::string> p;
        for (int q = 0; q < 2 && !p; ++q)
          if (isScalar(kappa->input(q), 0.044715))
            p = kappa->input(1 - q);
        std::vector<const NodeProto *> cube = p && onlyConsumer(*p) == kappa
                                                  ? cubeOf(*p, x) : std::vector<const NodeProto *>{};
        if (cube.empty())
          continue;
        cube.insert(cube.end(), {kappa, add, scaled});
        tail(tanh, x, cube, true);
        return;
      }
      return;
    }
  }

  /// The constant a Mul or Div of `n` scales its other operand by, and
  /// that operand; nullopt when `n` is neither.
  std::optional<std::pair<double, std::string>> scaled(const NodeProto *n) {
    if (!n || n->input_size() != 2 || n->output_size() != 1)
      return std::nullopt;
    if (n->op_type() == "Div") {
      std::optional<double> c = scalar(n->input(1));
      if (c && *c != 0)
        return std::pair{1.0 / *c, n->input(0)};
    } else if (n->op_type() == "Mul") {
      for (int i = 0; i < 2; ++i)
        if (std::optional<double> c = scalar(n->input(i)))
          return std::pair{*c, n->input(1 - i)};
    }
    return std::nullopt;
  }

  void attention(const NodeProto &softmax) {
    const NodeProto *last = onlyConsumer(softmax.output(0));
    if (softmax.input_size() != 1 || softmax.output_size() != 1 || !last ||
        last->op_type() != "MatMul" || last->input(0) != softmax.output(0))
      return;
    std::vector<const NodeProto *> inner{&softmax};
    double scale = 1;
    std::string scores = softmax.input(0);
    const NodeProto *mask = maskedFill(producerOf(scores));
    std::string bias;
    if (mask && onlyConsumer(scores) == &softmax) {
      inner.push_back(mask);
      scores = mask->input(isNegativeInfinity(mask->input(1)) ? 2 : 1);
    } else if (const NodeProto *add = producerOf(scores);
               add && add->op_type() == "Add" && add->input_size() == 2 &&
               add->output_size() == 1 && onlyConsumer(scores) == &softmax) {
      mask = nullptr;
      for (int c = 0; c < 2 && bias.empty(); ++c) // which operand is the scores
        if (leadsToScores(add->input(c)) && onlyConsumer(add->input(c)) == add) {
          inner.push_back(add);
          bias = add->input(1 - c);
          scores = add->input(c);
        }
    } else {
      mask = nullptr;
    }
    if (auto s = scaled(producerOf(scores)); s && onlyConsumer(scores) == inner.back()) {
      inner.push_back(producerOf(scores));
      scale *= s->first;
      scores = s->second;
    }
    const NodeProto *qk = producerOf(scores);
    if (!qk || qk->op_type() != "MatMul" || onlyConsumer(scores) != inner.back())
      return;
    inner.push_back(qk);
    std::string q = qk->input(0);
    if (auto s = scaled(producerOf(q)); s && onlyConsumer(q) == qk) {
      inner.push_back(producerOf(q));
      scale *= s->first;
      q = s->second;
    }
    const NodeProto *kt = producerOf(qk->input(1));
    std::optional<std::vector<int64_t>> perm =
        kt && kt->op_type() == "Transpose" ? im_.attrInts(*kt, "perm") : std::nullopt;
    int rank = perm ? (int)perm->size() : 0;
    if (!perm || (rank != 3 && rank != 4) || onlyConsumer(qk->input(1)) != qk)
      return;
    // k as the product reads it transposed: the perm with its last two
    // entries swapped takes the Transpose's input to k (often no perm).
    std::vector<int64_t> kPerm = *perm;
    std::swap(kPerm[rank - 2], kPerm[rank - 1]);
    int64_t axis = im_.attrInt(softmax, "axis", im_.opset >= 13 ? -1 : 1);
    if (axis != -1 && axis != rank - 1)
      return;
    inner.push_back(kt);
    for (const NodeProto *n : inner)
      im_.skipped.insert(n);
    std::sort(inner.begin(), inner.end(),
              [&](const NodeProto *a, const NodeProto *b) { return order_[a] < order_[b]; });
    inner.push_back(last);
    im_.attentions[last] = {q, kt->input(0), last->input(1), scale, rank, kPerm, mask, bias, inner};
  }

private:
  /// Whether `v` is a MatMul's product, scaled or not: the scores of an
  /// attention (an additive mask's other operand is not).
  bool leadsToScores(const std::string &v) {
    const NodeProto *p = producerOf(v);
    if (auto s = scaled(p))
      p = producerOf(s->second);
    return p && p->op_type() == "MatMul";
  }
  /// Whether `v` is a constant -inf or below f16's lowest (a masked fill).
  bool isNegativeInfinity(const std::string &v) {
    std::optional<double> c = scalar(v);
    return c && *c < -65504.0;
  }
  /// `n` when it is Where(cond, fill, x) or Where(cond, x, fill) with such a fill.
  const NodeProto *maskedFill(const NodeProto *n) {
    if (!n || n->op_type() != "Where" || n->input_size() != 3 || n->output_size() != 1)
      return nullptr;
    return isNegativeInfinity(n->input(1)) != isNegativeInfinity(n->input(2)) ? n : nullptr;
  }

  std::map<const NodeProto *, int> order_;
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
    else if (n.op_type() == "Tanh")
      m.geluTanh(n);
    else if (n.op_type() == "Softmax" && im.fuseAttention)
      m.attention(n);
}

} // namespace ampc::onnx_import
