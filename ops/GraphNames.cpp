#include "ops/GraphNames.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc::graph {

StringRef nodeName(Operation *op) {
  if (auto name = op->getAttrOfType<StringAttr>("name"))
    return name.getValue();
  return "";
}

StringRef valueName(Value value) {
  auto result = dyn_cast<OpResult>(value);
  if (!result)
    return "";
  Operation *op = result.getOwner();
  if (auto outs = op->getAttrOfType<ArrayAttr>("outs")) {
    unsigned i = result.getResultNumber();
    if (i < outs.size())
      if (auto s = dyn_cast<StringAttr>(outs[i]))
        return s.getValue();
    return "";
  }
  return nodeName(op);
}

bool isValueOp(Operation *op) {
  return isa<InputOp, ParamOp, ConstOp>(op);
}

Type elementType(Type type) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.getElementType();
  return type;
}

bool isFloatTensor(Type type) {
  return isa<FloatType>(elementType(type));
}

std::string dtypeName(Type t) {
  if (t.isF32()) return "f32";
  if (t.isF16()) return "f16";
  if (t.isBF16()) return "bf16";
  if (t.isF64()) return "f64";
  if (t.isFloat8E4M3FN()) return "f8e4m3";
  if (t.isFloat8E5M2()) return "f8e5m2";
  if (t.isInteger(32)) return "i32";
  if (t.isInteger(64)) return "i64";
  if (t.isInteger(1)) return "i1";
  return "";
}

Type parseDtype(MLIRContext *ctx, StringRef name) {
  Builder b(ctx);
  if (name == "f32") return b.getF32Type();
  if (name == "f16") return b.getF16Type();
  if (name == "bf16") return b.getBF16Type();
  if (name == "f64") return b.getF64Type();
  if (name == "f8e4m3") return b.getFloat8E4M3FNType();
  if (name == "f8e5m2") return b.getFloat8E5M2Type();
  if (name == "i32") return b.getI32Type();
  if (name == "i64") return b.getI64Type();
  if (name == "i1") return b.getI1Type();
  return nullptr;
}

} // namespace ampc::graph

namespace ampc::graph {

namespace {

/// The SSA name a value prints with: its name, with the path separators of
/// imported models ('/', ':') as dots, so that ONNX's "/conv1/Conv_output_0"
/// reads %conv1.Conv_output_0, not MLIR's escaped %_2Fconv1_2FConv_output_0.
/// Cosmetic: the value's name is its "name" attribute, printed as it is.
std::string readableName(StringRef name) {
  std::string out;
  for (char c : name) {
    char r = c == '/' || c == ':' ? '.' : c;
    if (r == '.' && (out.empty() || out.back() == '.'))
      continue;
    out += r;
  }
  while (!out.empty() && out.back() == '.')
    out.pop_back();
  return out.empty() ? name.str() : out;
}

} // namespace

void setAsmResultNames(Operation *op, OpAsmSetValueNameFn setNameFn) {
  for (Value v : op->getResults()) {
    StringRef name = valueName(v);
    if (!name.empty())
      setNameFn(v, readableName(name));
  }
}

} // namespace ampc::graph

namespace ampc::graph {

NameTable::NameTable(Operation *graph) {
  graph->walk([&](Operation *op) {
    if (!nodeName(op).empty())
      names_.insert(nodeName(op));
    for (Value v : op->getResults())
      names_.insert(valueName(v));
  });
}

std::string NameTable::fresh(StringRef base) {
  std::string name = base.str();
  for (int i = 1; names_.contains(name); ++i)
    name = base.str() + "_" + std::to_string(i);
  names_.insert(name);
  return name;
}

} // namespace ampc::graph
