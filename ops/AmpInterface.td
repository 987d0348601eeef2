#ifndef AMPC_AMP_INTERFACE
#define AMPC_AMP_INTERFACE

include "mlir/IR/OpBase.td"

def Graph_AmpOpInterface : OpInterface<"AmpOpInterface"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    The default automatic-mixed-precision policy of an op: its list (white,
    gray, black or none) and whether it only moves or selects data, so that it
    gives the same result in any float dtype (precision-agnostic). The AMP pass
    reads these; custom lists override the category per run.
  }];
  let methods = [
    StaticInterfaceMethod<"The op's default AMP list.",
      "::ampc::graph::AmpCategory", "getDefaultAmpCategory">,
    StaticInterfaceMethod<"True when the op only moves or selects data.",
      "bool", "isPrecisionAgnostic">,
    StaticInterfaceMethod<[{
        True when operand `index` stays f32 whatever dtype the op computes in
        (batch norm's scale, bias and statistics).
      }], "bool", "keepsOperandF32", (ins "unsigned":$index), "",
      "return false;">,
    StaticInterfaceMethod<[{
        True when operand `index` may stay in low precision while the op
        computes in f32: the kernel widens it, exactly, so no f32 copy is
        made (the logits of softmax_cross_entropy).
      }], "bool", "widensOperand", (ins "unsigned":$index), "",
      "return false;">,
  ];
}

#endif
