// Import-time evaluation of the ops exporters write to build masks, pads
// and index tables from shapes: comparisons, Not/And/Or/Xor, Where, Expand, Mod,
// ScatterND and Transpose on constants. vit's class-token batch logic (Equal, Where,
// Expand of a shape) and swin's shifted-window mask (Mod, ScatterND, Equal,
// Where) fold away this way on static shapes.
#include <cmath>

#include "compiler/onnx/OnnxFold.h"
#include "runtime/core/Convert.h"
#include "runtime/core/DType.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (int64_t i = (int64_t)shape.size() - 2; i >= 0; --i)
    s[i] = s[i + 1] * shape[i + 1];
  return s;
}

double toDtype(double v, const std::string &dtype) {
  if (isIntegerDtype(dtype))
    return dtype == "i1" ? double(v != 0) : std::trunc(v);
  std::byte bytes[8];
  rt::DType dt = *rt::parseDType(dtype);
  rt::storeElement(bytes, dt, 0, v);
  return rt::loadElement(bytes, dt, 0);
}

std::optional<std::vector<int64_t>> broadcastShape(llvm::ArrayRef<std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto &s : shapes)
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &o = out[rank - s.size() + i];
      if (s[i] != o && s[i] != 1 && o != 1)
        return std::nullopt;
      o = o == 1 ? s[i] : o;
    }
  return out;
}

std::optional<HostTensor> broadcastEach(llvm::ArrayRef<const HostTensor *> in,
                                        const std::string &dtype,
                                        const std::function<double(const double *)> &f) {
  std::vector<std::vector<int64_t>> shapes;
  for (const HostTensor *t : in)
    shapes.push_back(t->shape);
  std::optional<std::vector<int64_t>> out = broadcastShape(shapes);
  if (!out || product(*out) > kMaxFolded)
    return std::nullopt;
  size_t rank = out->size();
  // Each input's strides over the output's dimensions (0 where broadcast).
  std::vector<std::vector<int64_t>> strides;
  for (const HostTensor *t : in) {
    std::vector<int64_t> own = stridesOf(t->shape), s(rank, 0);
    for (size_t i = 0; i < t->shape.size(); ++i)
      s[rank - t->shape.size() + i] = t->shape[i] == 1 ? 0 : own[i];
    strides.push_back(s);
  }
  HostTensor r{dtype, *out, std::vector<double>(product(*out))};
  std::vector<int64_t> so = stridesOf(*out);
  std::vector<double> args(in.size());
  for (int64_t i = 0; i < (int64_t)r.data.size(); ++i) {
    for (size_t k = 0; k < in.size(); ++k) {
      int64_t at = 0, rest = i;
      for (size_t d = 0; d < rank; ++d) {
        at += rest / so[d] * strides[k][d];
        rest %= so[d];
      }
      args[k] = in[k]->data[at];
    }
    r.data[i] = toDtype(f(args.data()), dtype);
  }
  return r;
}

namespace {

/// ScatterND without reduction: copies of `data` with the slices that
/// `indices`' last dimension addresses replaced by `updates`.
HostTensor scatterND(Importer &im, const NodeProto &n, const HostTensor &data,
                     const HostTensor &indices, const HostTensor &updates) {
  if (im.attrString(n, "reduction", "none") != "none")
    throw im.fail(n, "only the reduction 'none' is supported");
  if (indices.shape.empty())
    throw im.fail(n, "indices need a rank of at least 1");
  int64_t k = indices.shape.back();
  if (k < 1 || k > (int64_t)data.shape.size())
    throw im.fail(n, "the indices' last dimension must be 1 to the data's rank");
  int64_t count = product(llvm::ArrayRef<int64_t>(indices.shape).drop_back());
  int64_t slice = product(llvm::ArrayRef<int64_t>(data.shape).drop_front(k));
  if (updates.data.size() != size_t(count * slice))
    throw im.fail(n, "the updates do not fit the indices");
  std::vector<int64_t> strides = stridesOf(data.shape);
  HostTensor r = data;
  for (int64_t i = 0; i < count; ++i) {
    int64_t at = 0;
    for (int64_t d = 0; d < k; ++d) {
      int64_t dim = data.shape[d], v = toInt64(indices.data[i * k + d]);
      if (v < -dim || v >= dim)
        throw im.fail(n, "index " + std::to_string(v) + " is out of range");
      at += (v < 0 ? v + dim : v) * strides[d];
    }
    std::copy_n(updates.data.begin() + i * slice, slice, r.data.begin() + at);
  }
  return r;
}

HostTensor transposed(Importer &im, const NodeProto &n, const HostTensor &x) {
  int64_t rank = x.shape.size();
  std::vector<int64_t> perm;
  for (int64_t i = rank - 1; i >= 0; --i)
    perm.push_back(i);
  perm = im.attrInts(n, "perm").value_or(perm);
  std::vector<bool> seen(rank, false);
  if ((int64_t)perm.size() != rank)
    throw im.fail(n, "perm needs " + std::to_string(rank) + " entries");
  for (int64_t &p : perm) {
    p = normalizeAxis(im, n, p, rank);
    if (seen[p])
      throw im.fail(n, "perm repeats axis " + std::to_string(p));
    seen[p] = true;
  }
  std::vector<int64_t> out(rank), from = stridesOf(x.shape);
  for (int64_t d = 0; d < rank; ++d)
    out[d] = x.shape[perm[d]];
  std::vector<int64_t> so = stridesOf(out);
  HostTensor r{x.dtype, out, std::vector<double>(x.data.size())};
  for (int64_t i = 0; i < (int64_t)r.data.size(); ++i) {
    int64_t at = 0, rest = i;
    for (int64_t d = 0; d < rank; ++d) {
      at += rest / so[d] * from[perm[d]];
      rest %= so[d];
    }
    r.data[i] = x.data[at];
  }
  return r;
}

double mod(double a, double b, bool integer, bool fmod) {
  if (integer && b == 0)
    return 0;
  double r = std::fmod(a, b);
  // Without fmod, the result takes the divisor's sign (Python's %).
  if (!fmod && r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

} // namespace

bool isLogicFold(const std::string &op) {
  static const std::set<std::string> ops = {
      "Equal", "Less",   "Greater", "LessOrEqual", "GreaterOrEqual", "Not",       "And",
      "Or",    "Xor",    "Where",   "Expand",      "Mod",            "ScatterND", "Transpose",
      "Trilu"};
  return ops.count(op);
}

std::optional<HostTensor> foldLogic(Importer &im, const NodeProto &n,
                                    llvm::ArrayRef<const HostTensor *> in) {
  const std::string &op = n.op_type();
  for (const HostTensor *t : in)
    if (!t)
      return std::nullopt;
  auto arity = [&](size_t k) {
    if (in.size() != k)
      throw im.fail(n, "takes " + std::to_string(k) + " inputs, got " +
                           std::to_string(in.size()));
  };
  // An elementwise op: its inputs broadcast (numpy's rules).
  auto elementwise = [&](size_t k) {
    arity(k);
    std::vector<std::vector<int64_t>> shapes;
    for (const HostTensor *t : in)
      shapes.push_back(t->shape);
    if (!broadcastShape(shapes))
      throw im.fail(n, "the inputs' shapes do not broadcast");
  };
  if (op == "Equal" || op == "Less" || op == "Greater" || op == "LessOrEqual" ||
      op == "GreaterOrEqual" || op == "And" || op == "Or" || op == "Xor") {
    elementwise(2);
    return broadcastEach(in, "i1", [&op](const double *v) {
      bool a = v[0] != 0, b = v[1] != 0;
      return op == "Equal" ? v[0] == v[1] : op == "Less" ? v[0] < v[1]
             : op == "Greater" ? v[0] > v[1] : op == "LessOrEqual" ? v[0] <= v[1]
             : op == "GreaterOrEqual" ? v[0] >= v[1] : op == "And" ? a && b
             : op == "Or" ? a || b : a != b;
    });
  }
  if (op == "Not") {
    elementwise(1);
    return broadcastEach(in, "i1", [](const double *v) { return v[0] == 0; });
  }
  if (op == "Where") {
    elementwise(3);
    return broadcastEach(in, in[1]->dtype,
                         [](const double *v) { return v[0] != 0 ? v[1] : v[2]; });
  }
  if (op == "Trilu") { // the upper (or lower) triangle from diagonal k, the rest 0
    if (in.empty() || in.size() > 2 || in[0]->shape.size() < 2)
      throw im.fail(n, "takes a tensor of rank 2 or more and an optional diagonal");
    int64_t k = in.size() == 2 ? (int64_t)in[1]->data.at(0) : 0;
    bool upper = im.attrInt(n, "upper", 1) != 0;
    HostTensor out = *in[0];
    int64_t rows = out.shape.end()[-2], cols = out.shape.end()[-1];
    for (size_t i = 0; i < out.data.size(); ++i) {
      int64_t r = (int64_t)(i / cols) % rows, c = (int64_t)(i % cols);
      if (upper ? c - r < k : c - r > k)
        out.data[i] = 0.0;
    }
    return out;
  }
  if (op == "Expand") {
    arity(2);
    HostTensor shape{"i64", toInt64(in[1]->data), {}};
    for (int64_t d : shape.shape)
      if (d < 0)
        throw im.fail(n, "the shape has a negative entry " + std::to_string(d));
    if (!broadcastShape({in[0]->shape, shape.shape}))
      throw im.fail(n, "cannot broadcast the input to the shape");
    if (product(shape.shape) > kMaxFolded)
      return std::nullopt;
    shape.data.assign(product(shape.shape), 0.0);
    return broadcastEach({in[0], &shape}, in[0]->dtype, [](const double *v) { return v[0]; });
  }
  if (op == "Mod") {
    elementwise(2);
    bool integer = isIntegerDtype(in[0]->dtype), fmod = im.attrInt(n, "fmod", 0);
    if (!integer && !fmod)
      throw im.fail(n, "a float Mod needs fmod = 1");
    return broadcastEach(in, in[0]->dtype, [&](const double *v) {
      return mod(v[0], v[1], integer, fmod);
    });
  }
  if (op == "Transpose") {
    arity(1);
    return transposed(im, n, *in[0]);
  }
  if (op == "ScatterND") {
    arity(3);
    return scatterND(im, n, *in[0], *in[1], *in[2]);
  }
  return std::nullopt;
}

} // namespace ampc::onnx_import
