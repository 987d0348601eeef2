// Op attributes <-> JSON. JSON has no attribute types, so the kind follows the
// JSON value: bool, integer, float, list of integers, string, dtype name (the
// keys `to` and `grad_to`), or a tensor object {dtype, shape, data} (the key
// `value`).
// Integers given where the ops take floats (such as `"rate": 0`) become floats.
#include "compiler/DenseData.h"
#include "compiler/Diagnostics.h"
#include "compiler/GraphJson.h"
#include "mlir/IR/Builders.h"
#include "ops/GraphNames.h"
#include "runtime/core/JsonText.h"

using namespace mlir;

namespace ampc {

static bool isFloatAttrName(StringRef name) {
  return llvm::is_contained({"scale", "bias", "rate", "epsilon", "momentum", "exponent",
                             "value", "mean", "std", "low", "high", "label_smoothing", "dropout"},
                            name);
}

/// The attributes that hold a dtype (TypeAttr): a cast's `to`, and an FP8
/// GEMM's operand dtype `to` and gradient dtype `grad_to`.
static bool isDtypeAttrName(StringRef name) { return name == "to" || name == "grad_to"; }

Json attrToJson(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue();
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return i.getInt();
  if (auto f = dyn_cast<FloatAttr>(attr))
    return f.getValueAsDouble();
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  if (auto t = dyn_cast<TypeAttr>(attr))
    return graph::dtypeName(t.getValue());
  if (auto a = dyn_cast<DenseI64ArrayAttr>(attr))
    return Json(std::vector<int64_t>(a.asArrayRef()));
  if (auto e = dyn_cast<ElementsAttr>(attr)) {
    auto type = cast<RankedTensorType>(e.getType());
    return Json{{"dtype", graph::dtypeName(type.getElementType())},
                {"shape", std::vector<int64_t>(type.getShape())},
                {"data", denseToJson(e)}};
  }
  if (auto d = dyn_cast<DictionaryAttr>(attr)) {
    Json out = Json::object();
    for (NamedAttribute field : d)
      out[field.getName().str()] = attrToJson(field.getValue());
    return out;
  }
  if (auto a = dyn_cast<ArrayAttr>(attr)) {
    Json out = Json::array();
    for (Attribute e : a)
      out.push_back(attrToJson(e));
    return out;
  }
  return nullptr;
}

/// A tensor object {dtype, shape, data}.
static Attribute tensorFromJson(MLIRContext *ctx, StringRef name, const Json &v) {
  auto bad = [&](const std::string &what) {
    return GraphError("attribute '" + name.str() + "': " + what);
  };
  if (!v.contains("dtype") || !v["dtype"].is_string() || !v.contains("shape") ||
      !v["shape"].is_array() || !v.contains("data") || !v["data"].is_array())
    throw bad("a tensor needs \"dtype\", \"shape\" and \"data\"");
  Type element = graph::parseDtype(ctx, v["dtype"].get<std::string>());
  if (!element)
    throw bad("unknown dtype '" + v["dtype"].get<std::string>() + "'");
  std::vector<int64_t> shape;
  for (const Json &d : v["shape"]) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw bad("shape entries must be non-negative integers");
    shape.push_back(d.get<int64_t>());
  }
  std::vector<double> data;
  for (const Json &d : v["data"]) {
    std::optional<double> x = rt::tensorElementFromJson(d);
    if (!x)
      throw bad("data entries must be numbers, or \"inf\", \"-inf\" or \"nan\"");
    data.push_back(*x);
  }
  auto type = RankedTensorType::get(shape, element);
  if ((int64_t)data.size() != type.getNumElements())
    throw bad("data has " + std::to_string(data.size()) + " elements, the shape needs " +
              std::to_string(type.getNumElements()));
  return denseFromDoubles(type, data);
}

Attribute attrFromJson(MLIRContext *ctx, StringRef name, const Json &v) {
  Builder b(ctx);
  if (v.is_boolean())
    return b.getBoolAttr(v.get<bool>());
  if (v.is_number_integer())
    return isFloatAttrName(name) ? Attribute(b.getF64FloatAttr(v.get<double>()))
                                 : Attribute(b.getI64IntegerAttr(v.get<int64_t>()));
  if (v.is_number_float())
    return b.getF64FloatAttr(v.get<double>());
  if (v.is_string()) {
    if (!isDtypeAttrName(name))
      return b.getStringAttr(v.get<std::string>());
    Type t = graph::parseDtype(ctx, v.get<std::string>());
    if (!t)
      throw GraphError("attribute '" + name.str() + "': unknown dtype '" +
                       v.get<std::string>() + "'");
    return TypeAttr::get(t);
  }
  if (v.is_array()) {
    std::vector<int64_t> ints;
    for (const Json &e : v) {
      if (!e.is_number_integer())
        throw GraphError("attribute '" + name.str() + "': lists must hold integers");
      ints.push_back(e.get<int64_t>());
    }
    return b.getDenseI64ArrayAttr(ints);
  }
  if (v.is_object() && name == "value")
    return tensorFromJson(ctx, name, v);
  if (v.is_object()) {
    NamedAttrList fields;
    for (auto it = v.begin(); it != v.end(); ++it)
      fields.set(it.key(), attrFromJson(ctx, it.key(), it.value()));
    return fields.getDictionary(ctx);
  }
  throw GraphError("attribute '" + name.str() + "' has an unsupported JSON value");
}

Json initFieldsToJson(DictionaryAttr init) {
  Json out = Json::object();
  for (NamedAttribute field : init)
    if (field.getName() != "data")
      out[field.getName().str()] = attrToJson(field.getValue());
  return out;
}

Json denseToJson(ElementsAttr value) {
  auto f = dyn_cast<FloatType>(value.getElementType());
  return rt::tensorDataToJson(denseToDoubles(value), f && !f.isF64());
}

Json initToJson(DictionaryAttr init) {
  Json out = initFieldsToJson(init);
  if (auto data = init.getAs<DenseElementsAttr>("data"))
    out["data"] = denseToJson(data); // after "kind": the long list last
  return out;
}

DictionaryAttr initFromJson(MLIRContext *ctx, const Json &init, ArrayRef<int64_t> shape) {
  if (!init.is_object())
    throw GraphError("\"init\" must be an object");
  if (!init.contains("data") || !init.value("kind", Json()).is_string() ||
      init["kind"].get<std::string>() != "data")
    return cast<DictionaryAttr>(attrFromJson(ctx, "init", init));
  Json rest = init;
  rest.erase("data");
  NamedAttrList fields(cast<DictionaryAttr>(attrFromJson(ctx, "init", rest)));
  Json tensor = {{"dtype", "f32"}, {"shape", Json(std::vector<int64_t>(shape))},
                 {"data", init["data"]}};
  fields.set("data", tensorFromJson(ctx, "init data", tensor));
  return fields.getDictionary(ctx);
}

} // namespace ampc
