#ifndef AMPC_GRADIENT_INTERFACE
#define AMPC_GRADIENT_INTERFACE

include "mlir/IR/OpBase.td"

def Graph_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    The gradient rule of a forward op: given the gradient of its result,
    builds the backward nodes that compute the gradients of the operands the
    autodiff asks for. Backward nodes run in the forward node's dtype.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds the gradients of the operands flagged in `wanted` from `dy`, the
        gradient of the (first) result; leaves the others null.
      }], "::llvm::LogicalResult", "buildGradients",
      (ins "::ampc::graph::GradBuilder &":$b, "::mlir::Value":$dy,
           "::llvm::ArrayRef<bool>":$wanted,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$grads)>,
  ];
}

#endif
