// Import-time evaluation of the shape arithmetic exporters write (Shape,
// Gather, Unsqueeze, Concat, Reshape of constants...): with every shape
// static, such chains are constants, and the graph gets their values. Also
// the shape rules that the mappings share with it.
#include <cmath>

#include "compiler/onnx/OnnxFold.h"
#include "compiler/onnx/OnnxImporter.h"
#include "runtime/core/Convert.h"
#include "runtime/core/DType.h"

namespace ampc::onnx_import {

using onnx::NodeProto;

namespace {

std::optional<HostTensor> broadcast(const HostTensor &a, const HostTensor &b,
                                    double (*f)(double, double, bool)) {
  return broadcastEach({&a, &b}, a.dtype, [&](const double *v) {
    return f(v[0], v[1], isIntegerDtype(a.dtype));
  });
}

double addF(double a, double b, bool) { return a + b; }
double subF(double a, double b, bool) { return a - b; }
double mulF(double a, double b, bool) { return a * b; }
double divF(double a, double b, bool integer) {
  return integer ? (b == 0 ? 0 : std::trunc(a / b)) : a / b;
}

std::optional<HostTensor> gatherValues(Importer &im, const NodeProto &n,
                                       const HostTensor &data, const HostTensor &idx) {
  int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), data.shape.size());
  std::vector<int64_t> out(data.shape.begin(), data.shape.begin() + axis);
  out.insert(out.end(), idx.shape.begin(), idx.shape.end());
  out.insert(out.end(), data.shape.begin() + axis + 1, data.shape.end());
  int64_t outer = product(llvm::ArrayRef<int64_t>(data.shape).take_front(axis));
  int64_t inner = product(llvm::ArrayRef<int64_t>(data.shape).drop_front(axis + 1));
  int64_t dim = data.shape[axis];
  if (product(out) > kMaxFolded)
    return std::nullopt;
  HostTensor r{data.dtype, out, {}};
  for (int64_t o = 0; o < outer; ++o)
    for (double v : idx.data) {
      int64_t i = toInt64(v);
      if (i < -dim || i >= dim)
        throw im.fail(n, "index " + std::to_string(i) + " is out of range");
      i = i < 0 ? i + dim : i;
      for (int64_t k = 0; k < inner; ++k)
        r.data.push_back(data.data[(o * dim + i) * inner + k]);
    }
  return r;
}

HostTensor sliceValues(Importer &im, const NodeProto &n, const HostTensor &x) {
  SliceRanges r = sliceRanges(im, n, x.shape);
  std::vector<int64_t> lo(x.shape.size(), 0), step(x.shape.size(), 1), out = x.shape;
  for (size_t i = 0; i < r.axes.size(); ++i) {
    lo[r.axes[i]] = r.starts[i];
    step[r.axes[i]] = r.steps[i];
    out[r.axes[i]] = r.size(i);
  }
  HostTensor t{x.dtype, out, std::vector<double>(product(out))};
  std::vector<int64_t> so = stridesOf(out), sx = stridesOf(x.shape);
  for (int64_t i = 0; i < (int64_t)t.data.size(); ++i) {
    int64_t at = 0, rest = i;
    for (size_t d = 0; d < out.size(); ++d) {
      at += (rest / so[d] * step[d] + lo[d]) * sx[d];
      rest %= so[d];
    }
    t.data[i] = x.data[at];
  }
  return t;
}

/// A Constant node's value (tensor or the scalar/list forms).
HostTensor constantValue(Importer &im, const NodeProto &n) {
  std::string where = "node '" + im.nodeName(n) + "' (Constant)";
  if (const onnx::AttributeProto *a = im.attr(n, "value"))
    return readTensor(a->t(), where);
  if (const onnx::AttributeProto *a = im.attr(n, "value_float"))
    return HostTensor{"f32", {}, {a->f()}};
  if (const onnx::AttributeProto *a = im.attr(n, "value_int"))
    return HostTensor{"i64", {}, {double(a->i())}};
  if (const onnx::AttributeProto *a = im.attr(n, "value_floats"))
    return HostTensor{"f32", {a->floats_size()},
                      std::vector<double>(a->floats().begin(), a->floats().end())};
  if (const onnx::AttributeProto *a = im.attr(n, "value_ints"))
    return HostTensor{"i64", {a->ints_size()},
                      std::vector<double>(a->ints().begin(), a->ints().end())};
  throw im.fail(n, "only value, value_float(s) and value_int(s) are supported");
}

/// The input's shape, known whether or not its values are.
std::optional<std::vector<int64_t>> shapeOf(Importer &im, const std::string &name) {
  auto t = im.tensors.find(name);
  if (t != im.tensors.end())
    return t->second.shape().vec();
  if (const HostTensor *c = im.constant(name))
    return c->shape;
  return std::nullopt;
}

} // namespace

std::vector<int64_t> reshapeTarget(Importer &im, const NodeProto &n, llvm::ArrayRef<int64_t> in,
                                   std::vector<int64_t> target) {
  bool allowZero = im.attrInt(n, "allowzero", 0);
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= in.size())
        throw im.fail(n, "shape entry 0 copies a dimension the input does not have");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer >= 0)
        throw im.fail(n, "the shape has more than one -1");
      infer = i;
    } else if (target[i] < 0) {
      throw im.fail(n, "shape entry " + std::to_string(target[i]) + " is invalid");
    } else {
      known = product({known, target[i]});
    }
  }
  if (infer >= 0)
    target[infer] = known ? product(in) / known : 0;
  if (product(target) != product(in))
    throw im.fail(n, "the shape does not keep the element count");
  return target;
}

static std::vector<int64_t> axesOf(Importer &im, const NodeProto &n) {
  if (im.opset >= 13 && n.input_size() > 1 && !n.input(1).empty())
    return im.intsInput(n, 1);
  return im.attrInts(n, "axes").value_or(std::vector<int64_t>{});
}

std::vector<int64_t> unsqueezed(Importer &im, const NodeProto &n, llvm::ArrayRef<int64_t> in) {
  std::vector<int64_t> axes = axesOf(im, n);
  int64_t rank = in.size() + axes.size();
  std::vector<bool> unit(rank, false);
  for (int64_t a : axes) {
    a = normalizeAxis(im, n, a, rank);
    if (unit[a])
      throw im.fail(n, "axis " + std::to_string(a) + " is repeated");
    unit[a] = true;
  }
  std::vector<int64_t> out;
  size_t next = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(unit[i] ? 1 : in[next++]);
  return out;
}

std::vector<int64_t> squeezed(Importer &im, const NodeProto &n, llvm::ArrayRef<int64_t> in) {
  std::vector<int64_t> axes = axesOf(im, n);
  std::vector<bool> drop(in.size(), axes.empty());
  if (axes.empty())
    for (size_t i = 0; i < in.size(); ++i)
      drop[i] = in[i] == 1;
  for (int64_t a : axes) {
    a = normalizeAxis(im, n, a, in.size());
    if (in[a] != 1)
      throw im.fail(n, "axis " + std::to_string(a) + " has size " + std::to_string(in[a]) +
                           ", not 1");
    drop[a] = true;
  }
  std::vector<int64_t> out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!drop[i])
      out.push_back(in[i]);
  return out;
}

SliceRanges sliceRanges(Importer &im, const NodeProto &n, llvm::ArrayRef<int64_t> in) {
  SliceRanges r;
  std::vector<int64_t> &steps = r.steps;
  if (im.opset >= 10) {
    r.starts = im.intsInput(n, 1);
    r.ends = im.intsInput(n, 2);
    if (n.input_size() > 3 && !n.input(3).empty())
      r.axes = im.intsInput(n, 3);
    if (n.input_size() > 4 && !n.input(4).empty())
      steps = im.intsInput(n, 4);
  } else {
    r.starts = im.attrInts(n, "starts").value_or(std::vector<int64_t>{});
    r.ends = im.attrInts(n, "ends").value_or(std::vector<int64_t>{});
    r.axes = im.attrInts(n, "axes").value_or(std::vector<int64_t>{});
  }
  if (r.axes.empty())
    for (size_t i = 0; i < r.starts.size(); ++i)
      r.axes.push_back(i);
  if (r.starts.size() != r.ends.size() || r.axes.size() != r.starts.size() ||
      (!steps.empty() && steps.size() != r.starts.size()))
    throw im.fail(n, "starts, ends, axes and steps need the same length");
  if (steps.empty())
    steps.assign(r.starts.size(), 1);
  for (size_t i = 0; i < r.axes.size(); ++i) {
    int64_t axis = r.axes[i] = normalizeAxis(im, n, r.axes[i], in.size());
    int64_t dim = in[axis];
    if (steps[i] == 0)
      throw im.fail(n, "a step is 0");
    // ONNX's clamping: [0, dim] going forward, [-1, dim - 1] going back.
    bool back = steps[i] < 0;
    auto clampIndex = [dim, back](int64_t v) {
      v = v < 0 ? (v < -dim ? -1 : v + dim) : v;
      return std::clamp<int64_t>(v, back ? -1 : 0, back ? dim - 1 : dim);
    };
    r.starts[i] = std::max<int64_t>(clampIndex(r.starts[i]), 0);
    r.ends[i] = back ? std::min(r.starts[i], clampIndex(r.ends[i]))
                     : std::max(r.starts[i], clampIndex(r.ends[i]));
  }
  return r;
}

/// `x` cast to `dtype` (Cast and CastLike of known values).
static HostTensor castValues(const HostTensor &x, const std::string &dtype) {
  HostTensor r{dtype, x.shape, x.data};
  for (double &v : r.data)
    v = toDtype(v, dtype);
  return r;
}

bool fold(Importer &im, const NodeProto &n) {
  const std::string &op = n.op_type();
  if (n.output_size() != 1 || n.output(0).empty())
    return false;
  const std::string &out = n.output(0);
  if (op == "Constant") {
    im.known[out] = constantValue(im, n);
    return true;
  }
  if (op == "Shape") {
    std::optional<std::vector<int64_t>> shape =
        n.input_size() ? shapeOf(im, n.input(0)) : std::nullopt;
    if (!shape)
      return false;
    int64_t rank = shape->size();
    int64_t start = im.attrInt(n, "start", 0), end = im.attrInt(n, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, start, rank);
    HostTensor t{"i64", {end - start}, {}};
    for (int64_t i = start; i < end; ++i)
      t.data.push_back((*shape)[i]);
    im.known[out] = t;
    return true;
  }
  if (op == "Size") { // static shapes: the element count is known
    std::optional<std::vector<int64_t>> shape =
        n.input_size() ? shapeOf(im, n.input(0)) : std::nullopt;
    if (!shape)
      return false;
    int64_t count = 1;
    for (int64_t d : *shape)
      count *= d;
    im.known[out] = HostTensor{"i64", {}, {(double)count}};
    return true;
  }
  if (op == "CastLike") { // a Cast of a known value to input 1's dtype
    if (n.input_size() != 2)
      return false;
    std::optional<std::string> from = im.dtypeOfValue(n.input(0)), to = im.dtypeOfValue(n.input(1));
    if (!from || !to || (im.initializers.count(n.input(0)) && !isIntegerDtype(*from)))
      return false; // a float initializer is a param: its values are not read here
    const HostTensor *x = im.constantInput(n, 0);
    if (!x)
      return false;
    im.known[out] = castValues(*x, *to);
    return true;
  }
  static const std::set<std::string> foldable = {
      "Add",     "Sub",  "Mul",   "Div",     "Gather",   "Unsqueeze",       "Squeeze",
      "Concat",  "Cast", "Reshape", "Identity", "Slice", "ConstantOfShape", "Range"};
  if (!foldable.count(op) && !isLogicFold(op) && !isMathFold(op))
    return false;
  // Every input known, none of them a float initializer: those are params.
  std::vector<const HostTensor *> in;
  for (const std::string &name : n.input()) {
    if (name.empty()) {
      in.push_back(nullptr);
      continue;
    }
    auto init = im.initializers.find(name);
    bool floatInit = init != im.initializers.end() &&
                     !isIntegerDtype(dtypeOf(init->second->data_type()).value_or("f32"));
    if (floatInit || !im.constant(name))
      return false;
    in.push_back(im.constant(name));
  }
  if (in.empty() || !in[0])
    return false;
  const HostTensor &x = *in[0];
  std::optional<HostTensor> r;
  if (isLogicFold(op)) {
    r = foldLogic(im, n, in);
  } else if (isMathFold(op)) {
    r = foldMath(im, n, in);
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") {
    if (in.size() != 2 || !in[1] || in[1]->dtype != x.dtype)
      return false;
    auto f = op == "Add" ? addF : op == "Sub" ? subF : op == "Mul" ? mulF : divF;
    r = broadcast(x, *in[1], f);
  } else if (op == "Gather" && in.size() == 2 && in[1]) {
    r = gatherValues(im, n, x, *in[1]);
  } else if (op == "Unsqueeze") {
    r = HostTensor{x.dtype, unsqueezed(im, n, x.shape), x.data};
  } else if (op == "Squeeze") {
    r = HostTensor{x.dtype, squeezed(im, n, x.shape), x.data};
  } else if (op == "Reshape") {
    r = HostTensor{x.dtype, reshapeTarget(im, n, x.shape, im.intsInput(n, 1)), x.data};
  } else if (op == "Identity") {
    r = x;
  } else if (op == "Slice") {
    r = sliceValues(im, n, x);
  } else if (op == "Cast") {
    std::optional<std::string> to = dtypeOf((int)im.attrInt(n, "to", 0));
    if (!to)
      return false;
    r = castValues(x, *to);
  } else if (op == "Concat") {
    int64_t axis = normalizeAxis(im, n, im.attrInt(n, "axis", 0), x.shape.size());
    std::vector<int64_t> shape = x.shape;
    shape[axis] = 0;
    for (const HostTensor *t : in) {
      if (!t || t->shape.size() != x.shape.size() || t->dtype != x.dtype)
        return false;
      for (size_t d = 0; d < shape.size(); ++d)
        if (d != (size_t)axis && t->shape[d] != shape[d])
          throw im.fail(n, "the inputs' shapes differ off the axis");
      shape[axis] += t->shape[axis];
    }
    if (product(shape) > kMaxFolded)
      return false;
    int64_t outer = product(llvm::ArrayRef<int64_t>(shape).take_front(axis));
    r = HostTensor{x.dtype, shape, {}};
    for (int64_t o = 0; o < outer; ++o)
      for (const HostTensor *t : in) {
        int64_t chunk = product(llvm::ArrayRef<int64_t>(t->shape).drop_front(axis));
        r->data.insert(r->data.end(), t->data.begin() + o * chunk,
                       t->data.begin() + (o + 1) * chunk);
      }
  } else if (op == "ConstantOfShape") {
    std::vector<int64_t> shape = toInt64(x.data);
    for (int64_t d : shape)
      if (d < 0 || d > kMaxFolded)
        return false;
    HostTensor value{"f32", {}, {0.0}};
    if (const onnx::AttributeProto *a = im.attr(n, "value"))
      value = readTensor(a->t(), "node '" + im.nodeName(n) + "' (ConstantOfShape)");
    if (value.data.size() != 1 || product(shape) > kMaxFolded)
      return false;
    r = HostTensor{value.dtype, shape, std::vector<double>(product(shape), value.data[0])};
  } else if (op == "Range" && in.size() == 3 && in[1] && in[2] && x.data.size() == 1 &&
             in[1]->data.size() == 1 && in[2]->data.size() == 1) {
    double start = x.data.at(0), limit = in[1]->data.at(0), delta = in[2]->data.at(0);
    double count = delta == 0 ? -1 : std::ceil((limit - start) / delta);
    if (!(count >= 0 && count <= kMaxFolded))
      return false;
    r = HostTensor{x.dtype, {int64_t(count)}, {}};
    for (int64_t i = 0; i < int64_t(count); ++i)
      r->data.push_back(start + i * delta);
  }
  if (!r || (int64_t)r->data.size() > kMaxFolded)
    return false;
  im.known[out] = std::move(*r);
  return true;
}

} // namespace ampc::onnx_import
