#include "ops/GradBuilder.h"

#include "ops/GraphNames.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc::graph {

void GradBuilder::setForward(Operation *op) { forwardName_ = nodeName(op).str(); }

Operation *GradBuilder::node(StringRef op, ValueRange operands, NamedAttrList attrs,
                             StringRef suffix) {
  return create(op, forwardName_ + "." + suffix.str(), operands, std::move(attrs));
}

Operation *GradBuilder::create(StringRef op, StringRef wanted, ValueRange operands,
                               NamedAttrList attrs, TypeRange resultTypes) {
  MLIRContext *ctx = b_.getContext();
  auto opName = RegisteredOperationName::lookup(("graph." + op).str(), ctx);
  std::string name = fresh_(wanted);
  Location loc = NameLoc::get(b_.getStringAttr("node '" + name + "'"));
  attrs.set("name", b_.getStringAttr(name));
  opName->populateDefaultAttrs(attrs);
  SmallVector<Type> types(resultTypes.begin(), resultTypes.end());
  if (auto *infer = opName->getInterface<NodeTypeInference>())
    if (failed(infer->inferNodeTypes(loc, operands, attrs.getDictionary(ctx), types)))
      return nullptr;
  if (types.size() > 1) {
    SmallVector<Attribute> outs;
    for (size_t i = 0; i < types.size(); ++i)
      outs.push_back(b_.getStringAttr(fresh_(name + "." + std::to_string(i))));
    attrs.set("outs", b_.getArrayAttr(outs));
  }
  OperationState state(loc, *opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  state.addTypes(types);
  return b_.create(state);
}

Value GradBuilder::value(StringRef op, ValueRange operands, NamedAttrList attrs,
                         StringRef suffix) {
  Operation *created = node(op, operands, std::move(attrs), suffix);
  return created ? created->getResult(0) : Value();
}

Value GradBuilder::scale(Value x, double s) {
  NamedAttrList attrs;
  attrs.set("scale", b_.getF64FloatAttr(s));
  return value("scale", {x}, attrs);
}

Value GradBuilder::cast(Value x, Type elementType) {
  if (graph::elementType(x.getType()) == elementType)
    return x;
  NamedAttrList attrs;
  attrs.set("to", TypeAttr::get(elementType));
  return value("cast", {x}, attrs);
}

Value GradBuilder::reshape(Value x, ArrayRef<int64_t> shape) {
  if (llvm::cast<RankedTensorType>(x.getType()).getShape() == shape)
    return x;
  NamedAttrList attrs;
  attrs.set("shape", b_.getDenseI64ArrayAttr(shape));
  return value("reshape", {x}, attrs);
}

Value GradBuilder::transpose(Value x, ArrayRef<int64_t> perm) {
  NamedAttrList attrs;
  attrs.set("perm", b_.getDenseI64ArrayAttr(perm));
  return value("transpose", {x}, attrs);
}

Value GradBuilder::matmul(Value a, Value b, bool ta, bool tb) {
  NamedAttrList attrs;
  attrs.set("transpose_a", b_.getBoolAttr(ta));
  attrs.set("transpose_b", b_.getBoolAttr(tb));
  return value("matmul", {a, b}, attrs);
}

Value GradBuilder::broadcastTo(Value x, ArrayRef<int64_t> shape) {
  if (llvm::cast<RankedTensorType>(x.getType()).getShape() == shape)
    return x;
  NamedAttrList attrs;
  attrs.set("shape", b_.getDenseI64ArrayAttr(shape));
  return value("broadcast_to", {x}, attrs);
}

Value GradBuilder::reduceTo(Value x, Value like) {
  ArrayRef<int64_t> shape = llvm::cast<RankedTensorType>(like.getType()).getShape();
  if (!x || llvm::cast<RankedTensorType>(x.getType()).getShape() == shape)
    return x;
  NamedAttrList attrs;
  attrs.set("shape", b_.getDenseI64ArrayAttr(shape));
  return value("reduce_to", {x}, attrs);
}

Value GradBuilder::unaryBackward(StringRef fn, Value x, Value y, Value dy, double exponent) {
  NamedAttrList attrs;
  attrs.set("fn", b_.getStringAttr(fn));
  attrs.set("exponent", b_.getF64FloatAttr(exponent));
  return value("unary_backward", {x, y, dy}, attrs);
}

} // namespace ampc::graph
