// Verifiers of the structure ops; the node ops are checked by their type
// inference (ops/TypeInference.cpp) and ODS constraints.
#include "ops/GraphOps.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/JSON.h"
#include "ops/GraphNames.h"

using namespace mlir;
using namespace ampc::graph;

#define GET_OP_CLASSES
#include "ops/GraphOps.cpp.inc"

/// Names are text that every tool writes back out (JSON, ONNX, reports): a
/// name that is not UTF-8 is refused where it enters. The error gives the
/// offending byte's position, not the bytes.
static LogicalResult checkUtf8(Operation *op, StringRef what, StringRef name) {
  size_t at = 0;
  if (llvm::json::isUTF8(name, &at))
    return success();
  return op->emitOpError("has a ") << what << " that is not valid UTF-8 (byte " << at + 1
                                   << " of " << name.size() << ")";
}

LogicalResult GraphOp::verifyRegions() {
  llvm::StringSet<> nodes, values;
  llvm::StringMap<Value> valueByName;
  if (failed(checkUtf8(*this, "graph name", getSymName())))
    return failure();
  Block &body = getBody().front();
  for (Operation &op : body) {
    if (isa<ReturnOp>(op))
      continue;
    if (!isa_and_nonnull<GraphDialect>(op.getDialect()))
      return op.emitOpError("is not a graph op; a graph holds graph ops only");
    StringRef name = nodeName(&op);
    if (name.empty())
      return op.emitOpError("needs a non-empty 'name'");
    if (failed(checkUtf8(&op, "name", name)))
      return failure();
    if (!isValueOp(&op)) {
      if (!nodes.insert(name).second)
        return op.emitOpError("duplicate node name '") << name << "'";
      auto outs = op.getAttrOfType<ArrayAttr>("outs");
      if (outs && outs.size() != op.getNumResults())
        return op.emitOpError("names ") << outs.size() << " outputs in 'outs' but has "
                                        << op.getNumResults();
      if (!outs && op.getNumResults() > 1)
        return op.emitOpError("has several results and needs 'outs' to name them");
    }
    for (Value v : op.getResults()) {
      StringRef vname = valueName(v);
      if (vname.empty())
        return op.emitOpError("has an unnamed result");
      if (failed(checkUtf8(&op, "value name", vname)))
        return failure();
      if (!values.insert(vname).second)
        return op.emitOpError("duplicate value name '") << vname << "'";
      valueByName[vname] = v;
    }
  }
  if (auto loss = getLoss()) {
    auto ret = cast<ReturnOp>(body.getTerminator());
    Value lossValue = valueByName.lookup(*loss);
    if (!lossValue)
      return emitOpError("loss '") << *loss << "' names no value";
    if (!llvm::is_contained(ret.getOutputs(), lossValue))
      return emitOpError("loss '") << *loss << "' is not a graph output";
    auto type = cast<RankedTensorType>(lossValue.getType());
    if (type.getRank() != 0 || !isa<FloatType>(type.getElementType()))
      return emitOpError("loss '") << *loss << "' must be a float scalar, got "
                                   << type;
  }
  if (auto model = getModel()) {
    auto name = model->getAs<StringAttr>("name");
    auto args = model->getAs<DictionaryAttr>("args");
    if (!name || name.getValue().empty() || !args || model->size() != 2)
      return emitOpError("model record needs exactly a string 'name' and a dictionary 'args'");
    for (NamedAttribute arg : args) {
      auto value = dyn_cast<StringAttr>(arg.getValue());
      if (!value)
        return emitOpError("model record's arg '") << arg.getName().getValue()
                                                  << "' must be a string";
      if (failed(checkUtf8(*this, "model arg", arg.getName().getValue())) ||
          failed(checkUtf8(*this, "model arg", value.getValue())))
        return failure();
    }
    if (failed(checkUtf8(*this, "model name", name.getValue())))
      return failure();
  }
  return success();
}

LogicalResult ParamOp::verify() {
  auto init = getInit();
  if (!init)
    return success();
  auto kind = init->getAs<StringAttr>("kind");
  if (!kind)
    return emitOpError("init needs a string 'kind'");
  static const llvm::StringMap<std::vector<StringRef>> kinds = {
      {"zeros", {}},          {"ones", {}},
      {"constant", {"value"}}, {"normal", {"mean", "std"}},
      {"uniform", {"low", "high"}}, {"xavier_uniform", {}},
      {"kaiming_normal", {}}, {"data", {"data"}}};
  auto it = kinds.find(kind.getValue());
  if (it == kinds.end())
    return emitOpError("unknown init kind '") << kind.getValue() << "'";
  if (kind.getValue() == "data") {
    auto data = init->getAs<DenseElementsAttr>("data");
    auto type = cast<RankedTensorType>(getValue().getType());
    if (!data || !isa<FloatType>(data.getElementType()) || !isa<FloatType>(type.getElementType()))
      return emitOpError("init 'data' needs a float tensor 'data' for a float param");
    if (data.getType().getShape() != type.getShape())
      return emitOpError("init data has shape ")
             << data.getType() << ", the param is " << type;
    if (init->size() != 2)
      return emitOpError("init 'data' has only the fields 'kind' and 'data'");
    return success();
  }
  for (NamedAttribute field : *init) {
    if (field.getName() == "kind")
      continue;
    if (!llvm::is_contained(it->second, field.getName().getValue()))
      return emitOpError("init '") << kind.getValue() << "' has no field '"
                                   << field.getName().getValue() << "'";
    if (!isa<FloatAttr, IntegerAttr>(field.getValue()) || isa<BoolAttr>(field.getValue()))
      return emitOpError("init field '") << field.getName().getValue()
                                         << "' must be a number";
  }
  return success();
}

LogicalResult ConstOp::verify() {
  if (getValue().getType() != getResult().getType())
    return emitOpError("value has type ") << getValue().getType()
                                          << " but the result is " << getResult().getType();
  return success();
}
