#include "compiler/NodeFactory.h"

#include "compiler/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "ops/GraphOps.h"

using namespace mlir;

namespace ampc {

namespace {

/// How many operands an op's ODS definition takes: exactly N (`exact`) or at
/// least N, read from its traits.
template <unsigned N> std::pair<unsigned, bool> operandCount(RegisteredOperationName op) {
  if constexpr (N > 12) {
    return {0, false};
  } else {
    if (op.hasTrait<OpTrait::NOperands<N>::template Impl>())
      return {N, true};
    if (op.hasTrait<OpTrait::AtLeastNOperands<N>::template Impl>())
      return {N, false};
    return operandCount<N + 1>(op);
  }
}

/// Checks the operand count before inference reads the operands.
void checkOperandCount(RegisteredOperationName op, size_t given, const std::string &where) {
  auto [count, exact] = op.hasTrait<OpTrait::ZeroOperands>() ? std::pair{0u, true}
                        : op.hasTrait<OpTrait::OneOperand>() ? std::pair{1u, true}
                                                              : operandCount<2>(op);
  if (exact ? given != count : given < count)
    throw GraphError(where + ": '" + op.getStringRef().str() + "' takes " +
                     (exact ? "" : "at least ") + std::to_string(count) + " input" +
                     (count == 1 ? "" : "s") + ", got " + std::to_string(given));
}

/// Checks that every attribute is one the op declares (a misspelled one
/// would otherwise be kept and ignored, and the default used), naming the
/// op's attributes.
void checkAttributeNames(RegisteredOperationName op, const NamedAttrList &attrs,
                         const std::string &where) {
  ArrayRef<StringAttr> declared = op.getAttributeNames();
  for (const NamedAttribute &a : attrs) {
    if (llvm::is_contained(declared, a.getName()))
      continue;
    std::string known;
    for (StringAttr name : declared)
      if (name.getValue() != "name" && name.getValue() != "outs")
        known += (known.empty() ? "" : ", ") + name.getValue().str();
    throw GraphError(where + ": '" + op.getStringRef().drop_front(6).str() +
                     "' has no attribute '" + a.getName().str() + "'; " +
                     (known.empty() ? "it takes none" : "it takes: " + known));
  }
}

} // namespace

bool isKnownOp(MLIRContext *ctx, StringRef op) {
  return RegisteredOperationName::lookup(("graph." + op).str(), ctx).has_value();
}

Operation *createNode(OpBuilder &builder, StringRef op, StringRef nodeName,
                      ValueRange operands, NamedAttrList attrs, TypeRange resultTypes) {
  MLIRContext *ctx = builder.getContext();
  std::string where = "node '" + nodeName.str() + "'";
  auto opName = RegisteredOperationName::lookup(("graph." + op).str(), ctx);
  if (!opName)
    throw GraphError(where + ": unknown op '" + op.str() + "'");
  checkOperandCount(*opName, operands.size(), where);
  checkAttributeNames(*opName, attrs, where);
  Location loc = NameLoc::get(builder.getStringAttr(where));
  attrs.set("name", builder.getStringAttr(nodeName));
  // Materialise ODS defaults, as the MLIR parser does: inference reads them.
  opName->populateDefaultAttrs(attrs);

  ErrorCollector errors(ctx);
  OperationState state(loc, *opName);
  state.addOperands(operands);
  state.addAttributes(attrs);
  SmallVector<Type> types;
  if (auto *infer = opName->getInterface<graph::NodeTypeInference>()) {
    if (failed(infer->inferNodeTypes(loc, operands, state.attributes.getDictionary(ctx),
                                     types)))
      errors.raise(where + ": invalid " + op.str());
  } else if (!resultTypes.empty()) {
    types.assign(resultTypes.begin(), resultTypes.end());
  } else {
    throw GraphError(where + ": '" + op.str() + "' needs its output's dtype and shape");
  }
  state.addTypes(types);
  Operation *created = builder.create(state);
  if (failed(verify(created))) {
    created->erase();
    errors.raise(where + ": invalid " + op.str());
  }
  return created;
}

} // namespace ampc
