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
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"
#include "runtime/core/BufferInit.h"
#include "compiler/onnx/OnnxExporter.h"

using namespace mlir;

namespace ampc {
namespace onnx_export {

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
    b.init = p.getInit() ? attrToJson(*p.getInit()) : rt::Json{{"kind", "zeros"}};
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
  if (movesClassesLastForLoss(op))
    return true; // the loss reads the scores as ONNX orders them
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

} // namespace onnx_export

std::string exportOnnx(ModuleOp module, uint64_t seed) {
  auto graphs = module.getOps<graph::GraphOp>();
  if (std::distance(graphs.begin(), graphs.end()) != 1)
    throw GraphError("the module must hold exactly one graph");
  return onnx_export::Exporter(seed).run(*graphs.begin());
}

} // namespace ampc
