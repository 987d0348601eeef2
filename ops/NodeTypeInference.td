#ifndef AMPC_NODE_TYPE_INFERENCE
#define AMPC_NODE_TYPE_INFERENCE

include "mlir/IR/OpBase.td"

def Graph_NodeTypeInference : OpInterface<"NodeTypeInference"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    Infers a node's result types from its operands and attributes, checking
    them on the way. Front ends call it to create nodes generically; the op's
    verifier calls the same code, so a bad node gets one error either way.
  }];
  let methods = [
    StaticInterfaceMethod<"Infers result types; emits an error at `loc` on failure.",
      "::llvm::LogicalResult", "inferNodeTypes",
      (ins "::mlir::Location":$loc, "::mlir::ValueRange":$operands,
           "::mlir::DictionaryAttr":$attrs,
           "::llvm::SmallVectorImpl<::mlir::Type> &":$types)>,
  ];
}

#endif
