// The ONNX exporter: one ONNX node per graph op, but for the forms the
// importer expands, which it writes back as one node so that import, export
// and import again give the same graph: matmul (+ scale) + add as Gemm,
// conv2d + bias add as Conv with B, global_avg_pool + reshape to [N,C,1,1]
// as GlobalAveragePool. NHWC ops are wrapped in Transposes (ONNX is NCHW).
#include "compiler/onnx/OnnxExport.h"

#include <map>
#include <set>

#include "compiler/DenseData.h"
#include "compiler/Diagnostics.h"
#include "compiler/GraphJson.h"
#include "compiler/onnx/OnnxTensor.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/BufferInit.h"

using namespace mlir;

namespace ampc {
namespace {

using onnx_import::HostTensor;

class Exporter {
public:
  explicit Exporter(uint64_t seed) : seed_(seed) {}
  std::string run(graph::GraphOp g);

private:
  onnx::GraphProto &graph() { return *model_.mutable_graph(); }
  std::string name(Value v) { return graph::valueName(v).str(); }
  std::string fresh(const std::string &base) {
    std::string n = base;
    for (int k = 1; !used_.insert(n).second; ++k)
      n = base + "_" + std::to_string(k);
    return n;
  }
  /// Node names are a namespace of their own.
  std::string freshNode(const std::string &base) {
    std::string n = base;
    for (int k = 1; !usedNodes_.insert(n).second; ++k)
      n = base + "_" + std::to_string(k);
    return n;
  }
  onnx::NodeProto &node(const std::string &type, const std::string &nodeName,
                        std::vector<std::string> inputs, std::vector<std::string> outputs) {
    onnx::NodeProto &n = *graph().add_node();
    n.set_op_type(type);
    n.set_name(nodeName);
    for (const std::string &i : inputs)
      n.add_input(i);
    for (const std::string &o : outputs)
      n.add_output(o);
    return n;
  }
  static void setInt(onnx::NodeProto &n, const char *key, int64_t v) {
    auto *a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void setFloat(onnx::NodeProto &n, const char *key, double v) {
    auto *a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(float(v));
  }
  static void setInts(onnx::NodeProto &n, const char *key, ArrayRef<int64_t> v) {
    auto *a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v)
      a->add_ints(x);
  }
  static void setString(onnx::NodeProto &n, const char *key, const std::string &v) {
    auto *a = n.add_attribute();
    a->set_name(key);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }
  /// A Constant node holding `t`, its output named after `base`: consts are
  /// nodes, so that only params are initializers (which import as params).
  std::string constant(const std::string &base, const HostTensor &t) {
    std::string n = fresh(base);
    auto *a = node("Constant", n, {}, {n}).add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    *a->mutable_t() = onnx_import::writeTensor(t, "");
    return n;
  }
  std::string ints(const std::string &base, ArrayRef<int64_t> v) {
    return constant(base, {"i64", {(int64_t)v.size()}, std::vector<double>(v.begin(), v.end())});
  }
  std::string scalar(const std::string &base, double v, const std::string &dtype) {
    return constant(base, {dtype, {}, {v}});
  }
  /// `v` with its dims permuted (a Transpose node), for NHWC ops.
  std::string transposed(const std::string &v, const std::string &nodeName,
                         ArrayRef<int64_t> perm) {
    std::string out = fresh(v + ".nchw");
    setInts(node("Transpose", freshNode(nodeName), {v}, {out}), "perm", perm);
    return out;
  }

  void valueInfo(onnx::ValueInfoProto &info, Value v);
  void param(graph::ParamOp p);
  bool fused(Operation *op);
  void emit(Operation *op);
  void windowed(Operation *op, const std::string &type, std::vector<std::string> inputs,
                const std::string &nodeName, const std::string &output);

  onnx::ModelProto model_;
  std::set<std::string> used_, usedNodes_;
  std::set<Operation *> done_;
  uint64_t seed_;
};

std::string dtypeOf(Value v) { return graph::dtypeName(graph::elementType(v.getType())); }
ArrayRef<int64_t> shapeOf(Value v) { return cast<RankedTensorType>(v.getType()).getShape(); }

int64_t intAttr(Operation *op, StringRef key, int64_t fallback) {
  auto a = op->getAttrOfType<IntegerAttr>(key);
  return a ? a.getInt() : fallback;
}
double floatAttr(Operation *op, StringRef key, double fallback) {
  auto a = op->getAttrOfType<FloatAttr>(key);
  return a ? a.getValueAsDouble() : fallback;
}
bool boolAttr(Operation *op, StringRef key) {
  auto a = op->getAttrOfType<BoolAttr>(key);
  return a && a.getValue();
}
std::vector<int64_t> intsAttr(Operation *op, StringRef key) {
  auto a = op->getAttrOfType<DenseI64ArrayAttr>(key);
  return a ? std::vector<int64_t>(a.asArrayRef()) : std::vector<int64_t>{};
}
std::string stringAttr(Operation *op, StringRef key, const std::string &fallback) {
  auto a = op->getAttrOfType<StringAttr>(key);
  return a ? a.getValue().str() : fallback;
}
std::string opName(Operation *op) {
  return op->getName().getStringRef().drop_front(6).str(); // "graph."
}

void Exporter::valueInfo(onnx::ValueInfoProto &info, Value v) {
  info.set_name(name(v));
  auto *t = info.mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx_import::onnxTypeOf(dtypeOf(v)));
  auto *shape = t->mutable_shape();
  for (int64_t d : shapeOf(v))
    shape->add_dim()->set_dim_value(d);
}

void Exporter::param(graph::ParamOp p) {
  std::string n = name(p);
  HostTensor t{dtypeOf(p), shapeOf(p).vec(), {}};
  auto data = p.getInit() ? p.getInit()->getAs<DenseElementsAttr>("data") : nullptr;
  if (data) {
    t.data = denseToDoubles(data);
  } else {
    rt::Buffer b;
    b.name = n;
    b.shape = t.shape;
    b.init = p.getInit() ? rt::Json::parse(attrToJson(*p.getInit()).dump())
                         : rt::Json{{"kind", "zeros"}};
    std::vector<float> values = rt::initialValues(rt::Plan{}, b, seed_);
    t.data.assign(values.begin(), values.end());
  }
  *graph().add_initializer() = onnx_import::writeTensor(t, n);
}

/// The importer's expansions, written back as one node. True when `op`
/// (the first op of such a form) was written.
/// Whether `v` is made before `op` (so a node fused at `op` may read it).
static bool earlier(Value v, Operation *op) {
  Operation *def = v.getDefiningOp();
  return !def || graph::isValueOp(def) || def->isBeforeInBlock(op);
}

bool Exporter::fused(Operation *op) {
  auto onlyUser = [](Value v) -> Operation * {
    return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
  };
  if (auto mm = dyn_cast<graph::MatmulOp>(op)) {
    // matmul [scale] add(C) on 2-D operands: Gemm.
    if (shapeOf(mm.getA()).size() != 2 || shapeOf(mm.getB()).size() != 2)
      return false;
    Value y = mm.getResult();
    Operation *scale = onlyUser(y);
    double alpha = 1.0;
    if (scale && isa<graph::ScaleOp>(scale) && floatAttr(scale, "bias", 0.0) == 0.0) {
      alpha = floatAttr(scale, "scale", 1.0);
      y = scale->getResult(0);
    } else {
      scale = nullptr;
    }
    Operation *add = onlyUser(y);
    if (!add || !isa<graph::AddOp>(add) || add->getOperand(0) != y || !earlier(add->getOperand(1), op) ||
        shapeOf(add->getOperand(1)).size() > 2 || shapeOf(add->getResult(0)) != shapeOf(y))
      return false;
    onnx::NodeProto &n = node("Gemm", graph::nodeName(add).str(),
                              {name(mm.getA()), name(mm.getB()), name(add->getOperand(1))},
                              {name(add->getResult(0))});
    if (boolAttr(op, "transpose_a"))
      setInt(n, "transA", 1);
    if (boolAttr(op, "transpose_b"))
      setInt(n, "transB", 1);
    if (alpha != 1.0)
      setFloat(n, "alpha", alpha);
    done_.insert(add);
    if (scale)
      done_.insert(scale);
    return true;
  }
  if (auto conv = dyn_cast<graph::Conv2dOp>(op)) {
    // conv2d (NCHW), add(reshape(bias [C] -> [C,1,1])): Conv with B.
    Operation *add = onlyUser(conv->getResult(0));
    if (stringAttr(op, "layout", "NHWC") != "NCHW" || !add || !isa<graph::AddOp>(add) ||
        add->getOperand(0) != conv->getResult(0))
      return false;
    auto reshape = add->getOperand(1).getDefiningOp<graph::ReshapeOp>();
    int64_t channels = shapeOf(conv->getResult(0))[1];
    if (!reshape || !reshape->getResult(0).hasOneUse() || !earlier(reshape->getOperand(0), op) ||
        shapeOf(reshape->getOperand(0)) != ArrayRef<int64_t>{channels} ||
        shapeOf(reshape->getResult(0)) != ArrayRef<int64_t>{channels, 1, 1})
      return false;
    done_.insert(add);
    done_.insert(reshape);
    windowed(op, "Conv", {name(conv->getOperand(0)), name(conv->getOperand(1)),
                          name(reshape->getOperand(0))},
             graph::nodeName(add).str(), name(add->getResult(0)));
    return true;
  }
  if (isa<graph::GlobalAvgPoolOp>(op) && stringAttr(op, "layout", "NHWC") == "NCHW") {
    // global_avg_pool, reshape to [N, C, 1, 1]: GlobalAveragePool.
    Operation *reshape = onlyUser(op->getResult(0));
    ArrayRef<int64_t> in = shapeOf(op->getOperand(0));
    if (!reshape || !isa<graph::ReshapeOp>(reshape) ||
        shapeOf(reshape->getResult(0)) != ArrayRef<int64_t>{in[0], in[1], 1, 1})
      return false;
    node("GlobalAveragePool", graph::nodeName(reshape).str(), {name(op->getOperand(0))},
         {name(reshape->getResult(0))});
    done_.insert(reshape);
    return true;
  }
  return false;
}

/// A conv, pool or batch norm: NCHW as it is, NHWC between Transposes (and
/// a conv's NHWC filter [Cout, KH, KW, Cin] transposed to ONNX's order).
void Exporter::windowed(Operation *op, const std::string &type, std::vector<std::string> inputs,
                        const std::string &nodeName, const std::string &output) {
  bool nhwc = stringAttr(op, "layout", "NHWC") == "NHWC";
  if (nhwc) {
    inputs[0] = transposed(inputs[0], nodeName + ".to_nchw", {0, 3, 1, 2});
    if (type == "Conv")
      inputs[1] = transposed(inputs[1], nodeName + ".filter", {0, 3, 1, 2});
  }
  std::string out = nhwc ? fresh(output + ".nchw") : output;
  onnx::NodeProto &n = node(type, nodeName, inputs, {out});
  if (type == "BatchNormalization") {
    setFloat(n, "epsilon", floatAttr(op, "epsilon", 1e-5));
    setFloat(n, "momentum", floatAttr(op, "momentum", 0.9));
  } else {
    std::vector<int64_t> p = intsAttr(op, "padding");
    if (p.size() == 2)
      p = {p[0], p[0], p[1], p[1]};
    if (p.size() != 4)
      p = {0, 0, 0, 0};
    setInts(n, "pads", {p[0], p[2], p[1], p[3]}); // [t, b, l, r] -> [t, l, b, r]
    if (type == "Conv") {
      std::vector<int64_t> s = intsAttr(op, "strides"), d = intsAttr(op, "dilations");
      setInts(n, "strides", s.empty() ? std::vector<int64_t>{1, 1} : s);
      setInts(n, "dilations", d.empty() ? std::vector<int64_t>{1, 1} : d);
      setInt(n, "group", intAttr(op, "groups", 1));
    } else {
      std::vector<int64_t> k = intsAttr(op, "kernel"), s = intsAttr(op, "strides");
      setInts(n, "kernel_shape", k);
      setInts(n, "strides", s.empty() ? k : s);
    }
  }
  if (nhwc)
    setInts(node("Transpose", freshNode(nodeName + ".to_nhwc"), {out}, {output}), "perm",
            {0, 2, 3, 1});
}

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
    // ampc's losses read L operands and compute in f32; ONNX's keep the dtype.
    std::string lossDtype = dtypeOf(op->getResult(0));
    for (int i = 0; i < (op_ == "mse_loss" ? 2 : 1); ++i)
      if (dtypeOf(op->getOperand(i)) != lossDtype) {
        std::string cast = fresh(in[i] + ".cast_" + lossDtype);
        setInt(node("Cast", cast, {in[i]}, {cast}), "to", onnx_import::onnxTypeOf(lossDtype));
        in[i] = cast;
      }
    if (op_ == "softmax_cross_entropy") {
      setString(node("SoftmaxCrossEntropyLoss", nodeName, in, out), "reduction", "mean");
      return;
    }
    std::string d = fresh(out[0] + ".diff"), sq = fresh(out[0] + ".squared");
    node("Sub", freshNode(nodeName + ".diff"), in, {d});
    node("Mul", freshNode(nodeName + ".squared"), {d, d}, {sq});
    setInt(node("ReduceMean", nodeName, {sq}, out), "keepdims", 0);
  } else {
    throw GraphError("node '" + nodeName + "': '" + op_ +
                     "' has no ONNX form (export takes forward graphs)");
  }
}

std::string Exporter::run(graph::GraphOp g) {
  model_.set_ir_version(8);
  model_.set_producer_name("ampc");
  auto *opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  graph().set_name(g.getSymName().str());
  for (Operation &op : g.getBody().front())
    for (Value v : op.getResults())
      used_.insert(name(v));
  for (Operation &op : g.getBody().front()) {
    if (auto in = dyn_cast<graph::InputOp>(op))
      valueInfo(*graph().add_input(), in);
    else if (auto p = dyn_cast<graph::ParamOp>(op))
      param(p);
    else if (auto c = dyn_cast<graph::ConstOp>(op)) {
      used_.erase(name(c)); // constant() takes the name afresh
      constant(name(c), {dtypeOf(c), shapeOf(c).vec(), denseToDoubles(c.getValue())});
    }
    else if (auto ret = dyn_cast<graph::ReturnOp>(op))
      for (Value v : ret.getOutputs())
        valueInfo(*graph().add_output(), v);
    else if (!done_.count(&op) && !fused(&op))
      emit(&op);
  }
  // ONNX's own checker and strict shape inference: a model that fails them
  // is ampc's bug, reported rather than written.
  try {
    onnx::checker::check_model(model_);
    onnx::ModelProto inferred = model_;
    onnx::shape_inference::InferShapes(inferred, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(/*check_type=*/true, /*error_mode=*/1));
  } catch (const std::exception &e) {
    throw GraphError(std::string("internal error: the exported model fails ONNX's checker: ") +
                     e.what());
  }
  return model_.SerializeAsString();
}

} // namespace

std::string exportOnnx(ModuleOp module, uint64_t seed) {
  auto graphs = module.getOps<graph::GraphOp>();
  if (std::distance(graphs.begin(), graphs.end()) != 1)
    throw GraphError("the module must hold exactly one graph");
  return Exporter(seed).run(*graphs.begin());
}

} // namespace ampc
