// Each graph op as ONNX nodes (docs/onnx.md, "Export"): one node with the
// op's name, or a few where ONNX 17 has no counterpart (gelu, scale, the
// losses).
#include <cmath>
#include <map>

#include "compiler/DenseData.h"
#include "compiler/Diagnostics.h"
#include "compiler/onnx/OnnxExporter.h"

using namespace mlir;

namespace ampc::onnx_export {

void Exporter::emit(Operation *op) {
  std::string op_ = opName(op), nodeName = graph::nodeName(op).str();
  std::vector<std::string> in, out;
  for (Value v : op->getOperands())
    in.push_back(name(v));
  for (Value v : op->getResults())
    out.push_back(name(v));
  static const std::map<std::string, std::string> same = {
      {"add", "Add"},     {"sub", "Sub"},         {"mul", "Mul"},   {"div", "Div"},
      {"maximum", "Max"}, {"minimum", "Min"},     {"neg", "Neg"},   {"abs", "Abs"},
      {"relu", "Relu"},   {"tanh", "Tanh"},       {"sigmoid", "Sigmoid"},
      {"erf", "Erf"},     {"exp", "Exp"},         {"log", "Log"},   {"sqrt", "Sqrt"},
      {"sin", "Sin"},     {"cos", "Cos"},
      {"identity", "Identity"}, {"dropout", "Identity"}};
  if (auto it = same.find(op_); it != same.end()) {
    node(it->second, nodeName, {in[0]} , out);
    if (op->getNumOperands() == 2)
      graph().mutable_node(graph().node_size() - 1)->add_input(in[1]);
    return;
  }
  std::string dtype = op->getNumResults() ? dtypeOf(op->getResult(0)) : "f32";
  if (op_ == "matmul") {
    std::vector<int64_t> a = shapeOf(op->getOperand(0)).vec(), b = shapeOf(op->getOperand(1)).vec();
    if (a.size() == 2 && b.size() == 2) {
      onnx::NodeProto &n = node("Gemm", nodeName, in, out);
      if (boolAttr(op, "transpose_a"))
        setInt(n, "transA", 1);
      if (boolAttr(op, "transpose_b"))
        setInt(n, "transB", 1);
      return;
    }
    for (int i : {0, 1}) {
      if (!boolAttr(op, i ? "transpose_b" : "transpose_a"))
        continue;
      int64_t rank = (i ? b : a).size();
      std::vector<int64_t> perm;
      for (int64_t d = 0; d < rank; ++d)
        perm.push_back(d);
      std::swap(perm[rank - 1], perm[rank - 2]);
      in[i] = transposed(in[i], nodeName + (i ? ".transpose_b" : ".transpose_a"), perm);
    }
    node("MatMul", nodeName, in, out);
  } else if (op_ == "conv2d") {
    windowed(op, "Conv", in, nodeName, out[0]);
  } else if (op_ == "max_pool2d") {
    windowed(op, "MaxPool", in, nodeName, out[0]);
  } else if (op_ == "avg_pool2d") {
    windowed(op, "AveragePool", in, nodeName, out[0]);
  } else if (op_ == "batch_norm") {
    windowed(op, "BatchNormalization", in, nodeName, out[0]);
  } else if (op_ == "global_avg_pool") {
    bool nhwc = stringAttr(op, "layout", "NHWC") == "NHWC";
    onnx::NodeProto &n = node("ReduceMean", nodeName, in, out);
    setInts(n, "axes", nhwc ? std::vector<int64_t>{1, 2} : std::vector<int64_t>{2, 3});
    setInt(n, "keepdims", 0);
  } else if (op_ == "layer_norm") {
    onnx::NodeProto &n = node("LayerNormalization", nodeName, in, out);
    setInt(n, "axis", intAttr(op, "axis", -1));
    setFloat(n, "epsilon", floatAttr(op, "epsilon", 1e-5));
  } else if (op_ == "scale") {
    double a = floatAttr(op, "scale", 1.0), b = floatAttr(op, "bias", 0.0);
    std::string mid = b == 0.0 ? out[0] : fresh(out[0] + ".scaled");
    node("Mul", nodeName, {in[0], scalar(nodeName + ".scale", a, dtype)}, {mid});
    if (b != 0.0)
      node("Add", freshNode(nodeName + ".bias"), {mid, scalar(nodeName + ".bias", b, dtype)}, out);
  } else if (op_ == "pow" || op_ == "rsqrt" || op_ == "square") {
    double e = op_ == "pow" ? floatAttr(op, "exponent", 1.0) : op_ == "rsqrt" ? -0.5 : 2.0;
    node("Pow", nodeName, {in[0], scalar(nodeName + ".exponent", e, dtype)}, out);
  } else if (op_ == "gelu") {
    // ONNX 17 has no Gelu: the erf form x * 0.5 * (1 + erf(x / sqrt 2)), or the tanh form.
    std::string x = in[0], base = out[0];
    std::string t;
    if (boolAttr(op, "approximate")) {
      std::string cube = fresh(base + ".cube"), inner = fresh(base + ".inner"),
                  scaled = fresh(base + ".scaled");
      node("Pow", freshNode(nodeName + ".cube"), {x, scalar(base + ".three", 3, dtype)}, {cube});
      std::string c = fresh(base + ".c");
      node("Mul", freshNode(nodeName + ".c"), {cube, scalar(base + ".k", 0.044715, dtype)}, {c});
      node("Add", freshNode(nodeName + ".inner"), {x, c}, {inner});
      node("Mul", freshNode(nodeName + ".scaled"),
           {inner, scalar(base + ".sqrt_2_over_pi", 0.7978845608028654, dtype)}, {scaled});
      t = fresh(base + ".tanh");
      node("Tanh", freshNode(nodeName + ".tanh"), {scaled}, {t});
    } else {
      std::string d = fresh(base + ".div");
      node("Div", freshNode(nodeName + ".div"), {x, scalar(base + ".sqrt2", 1.4142135623730951, dtype)}, {d});
      t = fresh(base + ".erf");
      node("Erf", freshNode(nodeName + ".erf"), {d}, {t});
    }
    // As PyTorch writes it, which the importer reads back as one gelu.
    std::string onePlus = fresh(base + ".one_plus"), times = fresh(base + ".times_x");
    node("Add", freshNode(nodeName + ".one_plus"), {t, scalar(base + ".one", 1, dtype)}, {onePlus});
    node("Mul", freshNode(nodeName + ".times_x"), {x, onePlus}, {times});
    node("Mul", nodeName, {times, scalar(base + ".half", 0.5, dtype)}, out);
  } else if (op_ == "reshape") {
    node("Reshape", nodeName, {in[0], ints(nodeName + ".shape", shapeOf(op->getResult(0)))}, out);
  } else if (op_ == "transpose") {
    setInts(node("Transpose", nodeName, in, out), "perm", intsAttr(op, "perm"));
  } else if (op_ == "flatten") {
    setInt(node("Flatten", nodeName, in, out), "axis", intAttr(op, "axis", 1));
  } else if (op_ == "concat") {
    setInt(node("Concat", nodeName, in, out), "axis", intAttr(op, "axis", 0));
  } else if (op_ == "slice") {
    node("Slice", nodeName,
         {in[0], ints(nodeName + ".starts", intsAttr(op, "starts")),
          ints(nodeName + ".ends", intsAttr(op, "ends")),
          ints(nodeName + ".axes", intsAttr(op, "axes"))},
         out);
  } else if (op_ == "reduce_sum" || op_ == "reduce_mean") {
    std::vector<int64_t> axes = intsAttr(op, "axes");
    bool sum = op_ == "reduce_sum";
    if (sum && !axes.empty()) // ReduceSum takes its axes as an input from opset 13
      in.push_back(ints(nodeName + ".axes", axes));
    onnx::NodeProto &n = node(sum ? "ReduceSum" : "ReduceMean", nodeName, in, out);
    if (!sum && !axes.empty())
      setInts(n, "axes", axes);
    setInt(n, "keepdims", boolAttr(op, "keepdims"));
  } else if (op_ == "softmax" || op_ == "log_softmax") {
    setInt(node(op_ == "softmax" ? "Softmax" : "LogSoftmax", nodeName, in, out), "axis",
           intAttr(op, "axis", -1));
  } else if (op_ == "embedding") {
    node("Gather", nodeName, {in[1], in[0]}, out);
  } else if (op_ == "cast") {
    setInt(node("Cast", nodeName, in, out), "to", onnx_import::onnxTypeOf(dtype));
  } else if (op_ == "constant") {
    auto value = op->getAttrOfType<ElementsAttr>("value");
    auto *a = node("Constant", nodeName, {}, out).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = onnx_import::writeTensor(
        {dtype, shapeOf(op->getResult(0)).vec(), denseToDoubles(value)}, "");
  } else if (op_ == "fill") {
    auto *a = node("ConstantOfShape", nodeName,
                   {ints(nodeName + ".shape", shapeOf(op->getResult(0)))}, out)
                  .add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = onnx_import::writeTensor({dtype, {1}, {floatAttr(op, "value", 0.0)}}, "");
  } else if (op_ == "softmax_cross_entropy" || op_ == "mse_loss") {
    bool crossEntropy = op_ == "softmax_cross_entropy";
    if (crossEntropy) {
      if (floatAttr(op, "label_smoothing", 0.0) != 0.0)
        throw GraphError("node '" + nodeName + "': ONNX's SoftmaxCrossEntropyLoss has no "
                         "label_smoothing (ampc train --label-smoothing sets it in training "
                         "alone; export the graph without it)");
      in[0] = classesSecond(op->getOperand(0), in[0], nodeName);
    }
    // ampc's losses read L operands and compute in f32; ONNX's keep the dtype.
    std::string lossDtype = dtypeOf(op->getResult(0));
    for (int i = 0; i < (crossEntropy ? 1 : 2); ++i)
      if (dtypeOf(op->getOperand(i)) != lossDtype) {
        std::string cast = fresh(in[i] + ".cast_" + lossDtype);
        setInt(node("Cast", cast, {in[i]}, {cast}), "to", onnx_import::onnxTypeOf(lossDtype));
        in[i] = cast;
      }
    if (crossEntropy) {
      onnx::NodeProto &loss = node("SoftmaxCrossEntropyLoss", nodeName, in, out);
      auto reduction = op->getAttrOfType<mlir::StringAttr>("reduction");
      setString(loss, "reduction", reduction ? reduction.str() : "mean");
      if (auto ignore = op->getAttrOfType<mlir::IntegerAttr>("ignore_index"))
        setInt(loss, "ignore_index", ignore.getInt());
      return;
    }
    std::string d = fresh(out[0] + ".diff"), sq = fresh(out[0] + ".squared");
    node("Sub", freshNode(nodeName + ".diff"), in, {d});
    node("Mul", freshNode(nodeName + ".squared"), {d, d}, {sq});
    setInt(node("ReduceMean", nodeName, {sq}, out), "keepdims", 0);
  } else if (op_ == "attention") { // ONNX's Attention is opset 23; ours is 17
    attention(op, in, out[0], nodeName);
  } else {
    throw GraphError("node '" + nodeName + "': '" + op_ +
                     "' has no ONNX form (export takes forward graphs)");
  }
}

/// Attention as PyTorch exports its unfused form, which ONNX 17 runs and the
/// importer's --fuse-attention reads back as one op: q, k and v to [batch,
/// heads, seq, d] by Transposes, MatMul, Mul by the scale, the causal mask as
/// nanoGPT's masked_fill (Where of an upper triangle, -inf) or the bias as
/// an Add, Softmax, MatMul with v and a Transpose back. The scores and the
/// softmax are f32 whatever the operands' dtype, as inside the fused op.
/// Dropout is training's alone: an exported graph runs inference.
/// A cross entropy's scores as ONNX reads them, [N, C, d1, ...]: the
/// operand of the transpose that import made (which writes no node), or a
/// Transpose of ampc's [N, d1, ..., C] written here.
std::string Exporter::classesSecond(Value scores, const std::string &scoresName,
                                    const std::string &nodeName) {
  Operation *classesLast = scores.getDefiningOp();
  if (classesLast && movesClassesLastForLoss(classesLast))
    return name(classesLast->getOperand(0));
  int64_t rank = shapeOf(scores).size();
  if (rank <= 2)
    return scoresName;
  std::vector<int64_t> perm{0, rank - 1};
  for (int64_t i = 1; i < rank - 1; ++i)
    perm.push_back(i);
  return transposed(scoresName, nodeName + ".classes_second", perm);
}

void Exporter::attention(Operation *op, const std::vector<std::string> &in,
                         const std::string &out, const std::string &nodeName) {
  std::string dtype = dtypeOf(op->getResult(0));
  ArrayRef<int64_t> q = shapeOf(op->getOperand(0)), k = shapeOf(op->getOperand(1));
  auto step = [&](const std::string &type, const std::string &what,
                  std::vector<std::string> inputs) -> std::pair<onnx::NodeProto *, std::string> {
    std::string v = fresh(out + "." + what);
    return {&node(type, freshNode(nodeName + "." + what), std::move(inputs), {v}), v};
  };
  auto transposed = [&](const std::string &v, const char *what, ArrayRef<int64_t> perm) {
    auto [n, r] = step("Transpose", what, {v});
    setInts(*n, "perm", perm);
    return r;
  };
  auto toF32 = [&](const std::string &v, const char *what) {
    if (dtype == "f32")
      return v;
    auto [n, r] = step("Cast", what, {v});
    setInt(*n, "to", onnx_import::onnxTypeOf("f32"));
    return r;
  };
  std::string qT = toF32(transposed(in[0], "q_heads", {0, 2, 1, 3}), "q_f32");
  std::string kT = toF32(transposed(in[1], "k_heads", {0, 2, 3, 1}), "k_f32");
  std::string vT = transposed(in[2], "v_heads", {0, 2, 1, 3});
  std::string scores = step("MatMul", "scores", {qT, kT}).second;
  double scale = floatAttr(op, "scale", 1.0 / std::sqrt((double)q[3]));
  scores = step("Mul", "scaled", {scores, scalar(out + ".scale", scale, "f32")}).second;
  if (boolAttr(op, "causal")) {
    std::string &mask = causalMasks_[{q[1], k[1]}];
    if (mask.empty()) { // above the diagonal: key j after query i; one per shape
      std::string ones = fresh("causal_mask.ones");
      auto *a = node("ConstantOfShape", freshNode("causal_mask.ones"),
                     {ints("causal_mask.shape", {q[1], k[1]})}, {ones})
                    .add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = onnx_import::writeTensor({"i1", {1}, {1}}, "");
      mask = fresh("causal_mask");
      node("Trilu", freshNode("causal_mask"), {ones, scalar("causal_mask.k", 1, "i64")}, {mask});
    }
    scores = step("Where", "masked",
                  {mask, scalar(out + ".masked_value", -INFINITY, "f32"), scores})
                 .second;
  }
  if (op->getNumOperands() == 4)
    scores = step("Add", "biased", {scores, in[3]}).second;
  auto [softmax, probs] = step("Softmax", "probs", {scores});
  setInt(*softmax, "axis", -1);
  if (dtype != "f32") {
    auto [n, r] = step("Cast", "probs_" + dtype, {probs});
    setInt(*n, "to", onnx_import::onnxTypeOf(dtype));
    probs = r;
  }
  std::string context = step("MatMul", "context", {probs, vT}).second;
  setInts(node("Transpose", nodeName, {context}, {out}), "perm", {0, 2, 1, 3});
}

} // namespace ampc::onnx_export
