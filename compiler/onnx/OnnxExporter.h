// The ONNX exporter's state, shared by its driver (OnnxExport.cpp) and the
// mapping of each graph op (OnnxExportOps.cpp).
#ifndef AMPC_COMPILER_ONNX_ONNXEXPORTER_H
#define AMPC_COMPILER_ONNX_ONNXEXPORTER_H

#include <map>
#include <set>
#include <string>
#include <vector>

#include "compiler/onnx/OnnxTensor.h"
#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

namespace ampc::onnx_export {

using mlir::ArrayRef;
using mlir::Operation;
using mlir::StringRef;
using mlir::Value;
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
  std::string classesSecond(Value scores, const std::string &scoresName,
                            const std::string &nodeName);
  void attention(Operation *op, const std::vector<std::string> &in, const std::string &out,
                 const std::string &nodeName);
  void windowed(Operation *op, const std::string &type, std::vector<std::string> inputs,
                const std::string &nodeName, const std::string &output);

  onnx::ModelProto model_;
  std::set<std::string> used_, usedNodes_;
  std::set<Operation *> done_;
  /// The causal masks emitted, by [seq_q, seq_k]: one per shape.
  std::map<std::pair<int64_t, int64_t>, std::string> causalMasks_;
  uint64_t seed_;
};

inline std::string dtypeOf(Value v) {
  return graph::dtypeName(graph::elementType(v.getType()));
}
inline ArrayRef<int64_t> shapeOf(Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType()).getShape();
}

inline int64_t intAttr(Operation *op, StringRef key, int64_t fallback) {
  auto a = op->getAttrOfType<mlir::IntegerAttr>(key);
  return a ? a.getInt() : fallback;
}
inline double floatAttr(Operation *op, StringRef key, double fallback) {
  auto a = op->getAttrOfType<mlir::FloatAttr>(key);
  return a ? a.getValueAsDouble() : fallback;
}
inline bool boolAttr(Operation *op, StringRef key) {
  auto a = op->getAttrOfType<mlir::BoolAttr>(key);
  return a && a.getValue();
}
inline std::vector<int64_t> intsAttr(Operation *op, StringRef key) {
  auto a = op->getAttrOfType<mlir::DenseI64ArrayAttr>(key);
  return a ? std::vector<int64_t>(a.asArrayRef()) : std::vector<int64_t>{};
}
inline std::string stringAttr(Operation *op, StringRef key, const std::string &fallback) {
  auto a = op->getAttrOfType<mlir::StringAttr>(key);
  return a ? a.getValue().str() : fallback;
}
/// A transpose that moves axis 1 last for a softmax_cross_entropy, its only
/// reader: what import makes of ONNX's [N, C, d1, ...] scores. Export writes
/// no node for it, and the loss reads its operand.
inline bool movesClassesLastForLoss(Operation *op) {
  auto t = mlir::dyn_cast<graph::TransposeOp>(op);
  if (!t || !t->getResult(0).hasOneUse() ||
      !mlir::isa<graph::SoftmaxCrossEntropyOp>(*t->getResult(0).getUsers().begin()))
    return false;
  std::vector<int64_t> perm = intsAttr(op, "perm");
  for (size_t i = 0; i < perm.size(); ++i)
    if (perm[i] != (i == 0 ? 0 : i + 1 == perm.size() ? 1 : int64_t(i) + 1))
      return false;
  return perm.size() > 2;
}

inline std::string opName(Operation *op) {
  return op->getName().getStringRef().drop_front(6).str(); // "graph."
}


} // namespace ampc::onnx_export

#endif
