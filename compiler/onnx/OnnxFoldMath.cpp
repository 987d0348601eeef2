// Import-time evaluation of the float math exporters leave on constants:
// rotary position embeddings (sin and cos of the positions times the
// inverse frequencies, that outer product written as MatMul or Einsum) and
// scales written as the Sqrt of a constant, sizes rounded by Floor or Ceil
// (an interpolation's output size). Values are computed in f64 and
// rounded once to their dtype: a folded angle is the exact f32 product and
// its cosine correctly rounded. Run in the graph instead, the outer product
// would be a GEMM that AMP puts in f16, where an angle above 512 rad keeps
// its phase only to 0.25 rad.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compiler/onnx/EinsumEquation.h"
#include "compiler/onnx/OnnxFold.h"
#include "compiler/onnx/OnnxImporter.h"
#include "runtime/core/DType.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

namespace {

/// Multiply-adds an import may spend on one folded node.
constexpr int64_t kMaxFoldWork = int64_t(1) << 26;

std::optional<HostTensor> unaryValues(const std::string &op, const HostTensor &x) {
  double (*f)(double) = nullptr;
  if (op == "Sin")
    f = [](double v) { return std::sin(v); };
  else if (op == "Cos")
    f = [](double v) { return std::cos(v); };
  else if (op == "Neg")
    f = [](double v) { return -v; };
  else if (op == "Sqrt")
    f = [](double v) { return std::sqrt(v); };
  else if (op == "Exp")
    f = [](double v) { return std::exp(v); };
  else if (op == "Log")
    f = [](double v) { return std::log(v); };
  else if (op == "Reciprocal")
    f = [](double v) { return 1 / v; };
  else if (op == "Tanh")
    f = [](double v) { return std::tanh(v); };
  else if (op == "Abs")
    f = [](double v) { return std::fabs(v); };
  else if (op == "Sign")
    f = [](double v) { return double((v > 0) - (v < 0)); };
  else if (op == "Floor")
    f = [](double v) { return std::floor(v); };
  else if (op == "Ceil")
    f = [](double v) { return std::ceil(v); };
  else if (op == "Round") // halves to even, as ONNX rounds
    f = [](double v) { return std::nearbyint(v); };
  bool anyDtype = op == "Neg" || op == "Abs" || op == "Sign";
  if (!f || (isIntegerDtype(x.dtype) && !anyDtype))
    return std::nullopt;
  HostTensor r{x.dtype, x.shape, x.data};
  for (double &v : r.data)
    v = toDtype(f(v), x.dtype);
  return r;
}

/// For each index of `batch` (row-major), the matching matrix of an operand
/// whose batch dimensions are `own` (numpy broadcasting: a size-1 or
/// missing dimension repeats).
std::vector<int64_t> batchMatrices(const std::vector<int64_t> &batch,
                                   const std::vector<int64_t> &own) {
  std::vector<int64_t> ownStrides = stridesOf(own), out = stridesOf(batch);
  size_t lead = batch.size() - own.size();
  std::vector<int64_t> r(product(batch));
  for (int64_t i = 0; i < (int64_t)r.size(); ++i) {
    int64_t at = 0;
    for (size_t d = lead; d < batch.size(); ++d)
      if (own[d - lead] != 1)
        at += i / out[d] % batch[d] * ownStrides[d - lead];
    r[i] = at;
  }
  return r;
}

/// numpy's matmul: 1-D operands are a row or a column, batches broadcast.
std::optional<HostTensor> matmulValues(const HostTensor &a, const HostTensor &b) {
  if (a.dtype != b.dtype || isIntegerDtype(a.dtype) || a.shape.empty() || b.shape.empty())
    return std::nullopt;
  std::vector<int64_t> as = a.shape, bs = b.shape;
  bool row = as.size() == 1, column = bs.size() == 1;
  if (row)
    as.insert(as.begin(), 1);
  if (column)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    return std::nullopt;
  std::vector<int64_t> aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  std::optional<std::vector<int64_t>> batch = broadcastShape({aBatch, bBatch});
  if (!batch)
    return std::nullopt;
  int64_t count = product(*batch);
  double outputs = double(count) * m * n; // in double: no overflow to test
  if (outputs > kMaxFolded || outputs * k > kMaxFoldWork)
    return std::nullopt;
  std::vector<int64_t> aAt = batchMatrices(*batch, aBatch), bAt = batchMatrices(*batch, bBatch);
  std::vector<int64_t> shape = *batch;
  if (!row)
    shape.push_back(m);
  if (!column)
    shape.push_back(n);
  HostTensor r{a.dtype, shape, std::vector<double>(count * m * n)};
  for (int64_t p = 0; p < count; ++p)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double sum = 0;
        for (int64_t l = 0; l < k; ++l)
          sum += a.data[(aAt[p] * m + i) * k + l] * b.data[(bAt[p] * k + l) * n + j];
        r.data[(p * m + i) * n + j] = toDtype(sum, a.dtype);
      }
  return r;
}

/// Any einsum without an ellipsis: every assignment of the labels visited
/// once, the products summed into the output's element. nullopt where the
/// equation does not match the operands (the mapping then says why).
std::optional<HostTensor> einsumValues(const std::string &equation,
                                       llvm::ArrayRef<const HostTensor *> in) {
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor *t : in) {
    if (t->dtype != in[0]->dtype)
      return std::nullopt;
    shapes.push_back(t->shape);
  }
  EinsumEquation e;
  if (!parseEinsum(equation, shapes, e).empty())
    return std::nullopt;
  const std::vector<std::string> &terms = e.terms;
  const std::string &out = e.out;
  const std::map<char, int64_t> &size = e.size;
  std::vector<int64_t> outShape = e.shapeOf(out);
  std::vector<char> labels;
  int64_t work = 1;
  bool empty = false; // a label of size 0: nothing to visit, every sum 0
  for (auto [c, s] : size) {
    labels.push_back(c);
    empty |= s == 0;
    if (s > 0 && work > kMaxFoldWork / s)
      return std::nullopt;
    work *= std::max<int64_t>(s, 1);
  }
  if (empty)
    work = 0;
  if (product(outShape) > kMaxFolded)
    return std::nullopt;
  // Each label's stride in each operand and in the output (a label repeated
  // in one term adds its strides: the diagonal).
  auto stridesByLabel = [&](const std::string &term, const std::vector<int64_t> &shape) {
    std::vector<int64_t> own = stridesOf(shape), s(labels.size(), 0);
    for (size_t d = 0; d < term.size(); ++d)
      s[std::find(labels.begin(), labels.end(), term[d]) - labels.begin()] += own[d];
    return s;
  };
  std::vector<std::vector<int64_t>> strides;
  for (size_t t = 0; t < terms.size(); ++t)
    strides.push_back(stridesByLabel(terms[t], in[t]->shape));
  std::vector<int64_t> outStrides = stridesByLabel(out, outShape);
  std::vector<double> sums(product(outShape), 0.0);
  std::vector<int64_t> index(labels.size(), 0);
  for (int64_t step = 0; step < work; ++step) {
    double p = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      int64_t at = 0;
      for (size_t l = 0; l < labels.size(); ++l)
        at += index[l] * strides[t][l];
      p *= in[t]->data[at];
    }
    int64_t at = 0;
    for (size_t l = 0; l < labels.size(); ++l)
      at += index[l] * outStrides[l];
    sums[at] += p;
    for (int64_t l = (int64_t)labels.size() - 1; l >= 0 && ++index[l] == size.at(labels[l]); --l)
      index[l] = 0;
  }
  HostTensor r{in[0]->dtype, outShape, std::move(sums)};
  for (double &v : r.data)
    v = toDtype(v, r.dtype);
  return r;
}

} // namespace

bool isMathFold(const std::string &op) {
  static const std::set<std::string> ops = {
      "Sin", "Cos",  "Neg",   "Sqrt", "Exp",   "Log", "Reciprocal", "Tanh",  "Abs",
      "Sign", "Floor", "Ceil", "Round", "Pow", "MatMul", "Einsum"};
  return ops.count(op);
}

std::optional<HostTensor> foldMath(Importer &im, const NodeProto &n,
                                   llvm::ArrayRef<const HostTensor *> in) {
  const std::string &op = n.op_type();
  for (const HostTensor *t : in)
    if (!t)
      return std::nullopt;
  if (op == "MatMul")
    return in.size() == 2 ? matmulValues(*in[0], *in[1]) : std::nullopt;
  if (op == "Einsum")
    return einsumValues(im.attrString(n, "equation", ""), in);
  if (op == "Pow") {
    if (in.size() != 2 || isIntegerDtype(in[0]->dtype))
      return std::nullopt;
    return broadcastEach(in, in[0]->dtype,
                         [](const double *v) { return std::pow(v[0], v[1]); });
  }
  return in.size() == 1 ? unaryValues(op, *in[0]) : std::nullopt;
}

} // namespace ampc::onnx_import
