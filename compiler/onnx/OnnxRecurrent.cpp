// ONNX's recurrent layers, LSTM, GRU and RNN (PyTorch's nn.LSTM, nn.GRU and
// nn.RNN), unrolled over their static sequence into graph ops, so that they
// train through the ops' own gradients (backpropagation through time) and
// run on every backend (docs/onnx.md, "Recurrent layers"):
// - the input projection of every step is one GEMM, X [T·B, I] by W^T,
//   with the biases that are added outside the recurrence;
// - each step is a GEMM of the previous hidden state by R^T, then the
//   gates' element ops on slices of the [B, gates·H] result;
// - a reverse direction walks the steps from the last, and Y holds each
//   direction's state at each step, in time order.
// Peepholes, clip, input_forget, per-sample sequence lengths and other
// activations than Sigmoid, Tanh and Relu are refused by name.
#include "compiler/onnx/OnnxImporter.h"

namespace ampc::onnx_import {

using onnx::NodeProto;
using Attrs = mlir::NamedAttrList;

namespace {

enum class Cell { Lstm, Gru, Rnn };

/// The graph ops of one recurrent node, each named `<Y>.<part>`.
struct Unroller {
  Importer &im;
  const NodeProto &n;
  Cell cell;
  int64_t steps, batch, hidden;
  std::string base;

  /// A node writing `<base>.<part>`, or ONNX value `out` where given.
  Tensor op(const std::string &part, llvm::StringRef type, llvm::ArrayRef<Tensor> in,
            Attrs a = {}, const std::string &out = "") {
    return im.emit(n, type, in, a, out.empty() ? base + "." + part : out, part);
  }
  Tensor slice(const std::string &part, Tensor x, int64_t axis, int64_t begin, int64_t end) {
    Attrs a;
    a.set("axes", ints(im, {axis}));
    a.set("starts", ints(im, {begin}));
    a.set("ends", ints(im, {end}));
    return op(part, "slice", {x}, a);
  }
  Tensor reshape(const std::string &part, Tensor x, llvm::ArrayRef<int64_t> shape) {
    Attrs a;
    a.set("shape", ints(im, shape));
    return op(part, "reshape", {x}, a);
  }
  Tensor transpose(const std::string &part, Tensor x, llvm::ArrayRef<int64_t> perm,
                   const std::string &out = "") {
    Attrs a;
    a.set("perm", ints(im, perm));
    return op(part, "transpose", {x}, a, out);
  }
  /// One tensor is itself (an identity where it must be written as `out`).
  Tensor concat(const std::string &part, llvm::ArrayRef<Tensor> in, int64_t axis,
                const std::string &out = "") {
    if (in.size() == 1)
      return out.empty() ? in[0] : op(part, "identity", in, {}, out);
    Attrs a;
    a.set("axis", B(im).getI64IntegerAttr(axis));
    return op(part, "concat", in, a, out);
  }
  /// x · w^T: w is [gates·H, K].
  Tensor matmulT(const std::string &part, Tensor x, Tensor w) {
    Attrs a;
    a.set("transpose_b", B(im).getBoolAttr(true));
    return op(part, "matmul", {x, w}, a);
  }
  /// The activation ONNX names, as a graph op.
  Tensor activate(const std::string &part, const std::string &f, Tensor x) {
    return op(part, f == "Sigmoid" ? "sigmoid" : f == "Tanh" ? "tanh" : "relu", {x});
  }
  /// Direction `d`'s slice of a per-direction input [D, rest...], as rest.
  Tensor ofDirection(const std::string &part, Tensor t, int64_t d) {
    std::vector<int64_t> rest(t.shape().begin() + 1, t.shape().end());
    return reshape(part, slice(part + "_slice", t, 0, d, d + 1), rest);
  }
};

int64_t gatesOf(Cell c) { return c == Cell::Lstm ? 4 : c == Cell::Gru ? 3 : 1; }

/// The activations attribute, checked: per direction f (and g, h), each
/// Sigmoid, Tanh or Relu; ONNX's defaults when absent.
std::vector<std::string> activations(Importer &im, const NodeProto &n, Cell cell,
                                     int64_t directions) {
  std::vector<std::string> defaults = cell == Cell::Lstm  ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                      : cell == Cell::Gru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                          : std::vector<std::string>{"Tanh"};
  const onnx::AttributeProto *a = im.attr(n, "activations");
  if (!a) {
    std::vector<std::string> all;
    for (int64_t d = 0; d < directions; ++d)
      all.insert(all.end(), defaults.begin(), defaults.end());
    return all;
  }
  if (static_cast<size_t>(a->strings_size()) != defaults.size() * directions)
    throw im.fail(n, "activations needs " + std::to_string(defaults.size() * directions) +
                         " names, got " + std::to_string(a->strings_size()));
  std::vector<std::string> all;
  for (const std::string &f : a->strings()) {
    if (f != "Sigmoid" && f != "Tanh" && f != "Relu")
      throw im.fail(n, "activation '" + f + "' is not supported (Sigmoid, Tanh and Relu are)");
    all.push_back(f);
  }
  return all;
}

void refuseUnsupported(Importer &im, const NodeProto &n, Cell cell, int64_t steps) {
  if (im.attr(n, "clip"))
    throw im.fail(n, "clip is not supported");
  refuseAttr(im, n, "input_forget", 0);
  if (cell == Cell::Lstm && im.optionalInput(n, 7))
    throw im.fail(n, "peepholes (input P) are not supported");
  if (n.input_size() > 4 && !n.input(4).empty()) {
    const HostTensor *lens = im.constantInput(n, 4);
    if (!lens)
      throw im.fail(n, "sequence_lens must be known at import time");
    for (double l : lens->data)
      if (l != static_cast<double>(steps))
        throw im.fail(n, "sequence_lens shorter than the sequence (" + std::to_string(steps) +
                             ") are not supported: every sample runs the whole sequence");
  }
}

/// One direction over the sequence: its states [T] in time order and the
/// last (h, and c for an LSTM).
struct Run {
  std::vector<Tensor> states;
  Tensor h, c;
};

Run runDirection(Unroller &u, int64_t d, bool reverse, Tensor x2d, Tensor w, Tensor r,
                 Tensor bias, Tensor h0, Tensor c0, llvm::ArrayRef<std::string> f,
                 bool linearBeforeReset) {
  Importer &im = u.im;
  const std::string dir = "d" + std::to_string(d);
  int64_t H = u.hidden, G = gatesOf(u.cell), T = u.steps, Bt = u.batch;
  Tensor wd = u.ofDirection(dir + ".w", w, d), rd = u.ofDirection(dir + ".r", r, d);
  // The input projection of every step at once, with the biases outside the
  // recurrence: Wb + Rb (LSTM, RNN) or Wb (GRU, whose Rb goes with R's GEMM).
  Tensor xw = u.matmulT(dir + ".input_projection", x2d, wd);
  Tensor rb;
  if (bias) {
    Tensor b = u.ofDirection(dir + ".bias", bias, d);
    Tensor wb = u.slice(dir + ".wb", b, 0, 0, G * H);
    rb = u.slice(dir + ".rb", b, 0, G * H, 2 * G * H);
    Tensor inputBias = u.cell == Cell::Gru ? wb : u.op(dir + ".wb_rb", "add", {wb, rb});
    xw = u.op(dir + ".input_projection_biased", "add", {xw, inputBias});
  }
  xw = u.reshape(dir + ".input_projection_steps", xw, {T, Bt, G * H});
  Tensor rZr, rN;
  if (u.cell == Cell::Gru && !linearBeforeReset) {
    rZr = u.slice(dir + ".r_zr", rd, 0, 0, 2 * H);
    rN = u.slice(dir + ".r_n", rd, 0, 2 * H, 3 * H);
  }
  Run run;
  run.states.resize(T);
  Tensor h = h0 ? u.ofDirection(dir + ".h0", h0, d)
                : im.fill(u.n, {Bt, H}, 0.0, x2d, dir + ".h0");
  Tensor c;
  if (u.cell == Cell::Lstm)
    c = c0 ? u.ofDirection(dir + ".c0", c0, d)
           : im.fill(u.n, {Bt, H}, 0.0, x2d, dir + ".c0");
  for (int64_t s = 0; s < T; ++s) {
    int64_t t = reverse ? T - 1 - s : s;
    std::string p = dir + ".t" + std::to_string(t) + ".";
    Tensor xt = u.reshape(p + "x", u.slice(p + "x_step", xw, 0, t, t + 1), {Bt, G * H});
    if (u.cell == Cell::Lstm) { // gates i, o, f, c
      Tensor g = u.op(p + "gates", "add", {xt, u.matmulT(p + "recurrent", h, rd)});
      Tensor i = u.activate(p + "i", f[0], u.slice(p + "i_in", g, 1, 0, H));
      Tensor o = u.activate(p + "o", f[0], u.slice(p + "o_in", g, 1, H, 2 * H));
      Tensor fg = u.activate(p + "f", f[0], u.slice(p + "f_in", g, 1, 2 * H, 3 * H));
      Tensor cc = u.activate(p + "candidate", f[1], u.slice(p + "c_in", g, 1, 3 * H, 4 * H));
      c = u.op(p + "c", "add",
               {u.op(p + "c_kept", "mul", {fg, c}), u.op(p + "c_new", "mul", {i, cc})});
      h = u.op(p + "h", "mul", {o, u.activate(p + "c_out", f[2], c)});
    } else if (u.cell == Cell::Gru) { // gates z, r, h
      Tensor hr = u.matmulT(p + "recurrent", h, rZr ? rZr : rd);
      if (rb)
        hr = u.op(p + "recurrent_biased", "add",
                  {hr, rZr ? u.slice(p + "rb_zr", rb, 0, 0, 2 * H) : rb});
      Tensor hrZr = rZr ? hr : u.slice(p + "hr_zr", hr, 1, 0, 2 * H);
      Tensor zr = u.activate(p + "zr", f[0],
                             u.op(p + "zr_in", "add", {u.slice(p + "x_zr", xt, 1, 0, 2 * H), hrZr}));
      Tensor z = u.slice(p + "z", zr, 1, 0, H), rg = u.slice(p + "r", zr, 1, H, 2 * H);
      Tensor hn;
      if (linearBeforeReset) {
        hn = u.op(p + "n_recurrent", "mul", {rg, u.slice(p + "hr_n", hr, 1, 2 * H, 3 * H)});
      } else {
        hn = u.matmulT(p + "n_recurrent", u.op(p + "h_reset", "mul", {rg, h}), rN);
        if (rb)
          hn = u.op(p + "n_recurrent_biased", "add", {hn, u.slice(p + "rb_n", rb, 0, 2 * H, 3 * H)});
      }
      Tensor nIn = u.op(p + "n_in", "add", {u.slice(p + "x_n", xt, 1, 2 * H, 3 * H), hn});
      Tensor nt = u.activate(p + "n", f[1], nIn);
      // h = (1 - z) n + z h = n + z (h - n)
      h = u.op(p + "h", "add",
               {nt, u.op(p + "h_kept", "mul", {z, u.op(p + "h_minus_n", "sub", {h, nt})})});
    } else {
      h = u.activate(p + "h", f[0],
                     u.op(p + "h_in", "add", {xt, u.matmulT(p + "recurrent", h, rd)}));
    }
    run.states[t] = u.reshape(p + "state", h, {1, 1, Bt, H});
  }
  run.h = h;
  run.c = c;
  return run;
}

/// Whether ONNX value `name` is read by a node or is a graph output.
bool wanted(Importer &im, const NodeProto &n, int i) {
  return i < n.output_size() && !n.output(i).empty() &&
         (im.read.count(n.output(i)) || im.graphOutputs.count(n.output(i)));
}

void recurrent(Importer &im, const NodeProto &n, Cell cell) {
  Tensor x = im.input(n, 0), w = im.input(n, 1), r = im.input(n, 2);
  Tensor bias = im.optionalInput(n, 3), h0 = im.optionalInput(n, 5);
  Tensor c0 = cell == Cell::Lstm ? im.optionalInput(n, 6) : Tensor();
  requireRank(im, n, x, 3);
  int64_t layout = im.attrInt(n, "layout", 0);
  if (layout != 0 && layout != 1)
    throw im.fail(n, "layout " + std::to_string(layout) + " is not 0 or 1");
  bool batchFirst = layout == 1;
  std::string direction = im.attrString(n, "direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    throw im.fail(n, "direction '" + direction + "' is not forward, reverse or bidirectional");
  int64_t D = direction == "bidirectional" ? 2 : 1;
  int64_t H = im.attrInt(n, "hidden_size", 0), G = gatesOf(cell);
  Unroller u{im, n, cell, x.dim(batchFirst ? 1 : 0), x.dim(batchFirst ? 0 : 1), H,
             n.output_size() > 0 && !n.output(0).empty() ? n.output(0) : im.nodeName(n)};
  int64_t I = x.dim(2);
  if (H < 1)
    throw im.fail(n, "needs a positive hidden_size");
  // Each step becomes about fifteen graph ops: a bound keeps a malformed
  // model from building a graph without end.
  constexpr int64_t kMaxSteps = 8192;
  if (u.steps > kMaxSteps)
    throw im.fail(n, "a sequence of " + std::to_string(u.steps) +
                         " steps is too long to unroll (at most " + std::to_string(kMaxSteps) +
                         ")");
  auto expect = [&](Tensor t, std::vector<int64_t> shape, const char *what) {
    if (t && t.shape().vec() != shape)
      throw im.fail(n, std::string(what) + " has the wrong shape for hidden_size " +
                           std::to_string(H) + " and " + std::to_string(D) + " direction(s)");
  };
  expect(w, {D, G * H, I}, "W");
  expect(r, {D, G * H, H}, "R");
  expect(bias, {D, 2 * G * H}, "B");
  std::vector<int64_t> stateShape =
      batchFirst ? std::vector<int64_t>{u.batch, D, H} : std::vector<int64_t>{D, u.batch, H};
  expect(h0, stateShape, "initial_h");
  expect(c0, stateShape, "initial_c");
  refuseUnsupported(im, n, cell, u.steps);
  std::vector<std::string> f = activations(im, n, cell, D);
  bool linearBeforeReset = im.attrInt(n, "linear_before_reset", 0) != 0;
  // Batch first ([B, T, I], states [B, D, H]): the sequence's axis first.
  if (batchFirst) {
    x = u.transpose("time_first", x, {1, 0, 2});
    if (h0)
      h0 = u.transpose("h0_time_first", h0, {1, 0, 2});
    if (c0)
      c0 = u.transpose("c0_time_first", c0, {1, 0, 2});
  }
  Tensor x2d = u.reshape("rows", x, {u.steps * u.batch, I});
  size_t perDirection = f.size() / D;
  std::vector<Run> runs;
  for (int64_t d = 0; d < D; ++d)
    runs.push_back(runDirection(u, d, direction == "reverse" || d == 1, x2d, w, r, bias, h0, c0,
                                llvm::ArrayRef<std::string>(f).slice(d * perDirection, perDirection),
                                linearBeforeReset));
  // Output `i` as the concat of `parts` along axis 0, transposed by
  // `batchPerm` where the layout is batch first.
  auto write = [&](int i, const std::string &part, llvm::ArrayRef<Tensor> parts,
                   llvm::ArrayRef<int64_t> batchPerm) {
    if (!batchFirst)
      return (void)u.concat(part, parts, 0, n.output(i));
    u.transpose(part, u.concat(part + "_stacked", parts, 0), batchPerm, n.output(i));
  };
  // Y [T, D, B, H] (batch first: [B, T, D, H]); Y_h and Y_c [D, B, H].
  if (wanted(im, n, 0)) {
    std::vector<Tensor> steps;
    for (int64_t t = 0; t < u.steps; ++t) {
      std::vector<Tensor> dirs;
      for (const Run &run : runs)
        dirs.push_back(run.states[t]);
      steps.push_back(u.concat("y_t" + std::to_string(t), dirs, 1));
    }
    write(0, "y", steps, {2, 0, 1, 3});
  }
  for (int i : {1, 2}) {
    if (!wanted(im, n, i) || (i == 2 && cell != Cell::Lstm))
      continue;
    std::string part = i == 1 ? "y_h" : "y_c";
    std::vector<Tensor> last;
    for (size_t d = 0; d < runs.size(); ++d)
      last.push_back(u.reshape(part + "_d" + std::to_string(d), i == 1 ? runs[d].h : runs[d].c,
                               {1, u.batch, H}));
    write(i, part, last, {1, 0, 2});
  }
}

} // namespace

void lstm(Importer &im, const NodeProto &n) { recurrent(im, n, Cell::Lstm); }
void gru(Importer &im, const NodeProto &n) { recurrent(im, n, Cell::Gru); }
void rnn(Importer &im, const NodeProto &n) { recurrent(im, n, Cell::Rnn); }

} // namespace ampc::onnx_import
