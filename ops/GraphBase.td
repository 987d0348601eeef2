#ifndef AMPC_GRAPH_BASE
#define AMPC_GRAPH_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "ops/AmpInterface.td"
include "ops/NodeTypeInference.td"
include "ops/GradientInterface.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::ampc::graph";
  let summary = "Static training graphs for automatic mixed precision.";
  let description = [{
    A `graph.graph` holds one static computation graph: its inputs, parameters
    and constants, the nodes that compute on them, and its outputs. Every node
    carries the user's name; passes never rename a node or a value.
  }];
  // Plain attribute dictionaries: the JSON front end builds ops generically and
  // lets the verifier report attributes of the wrong kind.
  let usePropertiesForAttributes = 0;
}

def Graph_FloatTensor : StaticShapeTensorOf<[F16, BF16, F32, F64]>;
def Graph_IntTensor : StaticShapeTensorOf<[I32, I64]>;
// Any dtype a value may hold: the compute floats, OCP's FP8 formats (stored
// and cast, not computed in) and the integers.
def Graph_Tensor : StaticShapeTensorOf<[F16, BF16, F32, F64, F8E4M3FN, F8E5M2, I1, I32, I64]>;

def Graph_DtypeAttr : TypeAttrBase<"::mlir::Type", "a graph dtype">;

// Results print with the user's value names (`%fc1.matmul`), so IR dumps read
// like the saved graph.
class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic,
         !listconcat(traits, [DeclareOpInterfaceMethods<OpAsmOpInterface,
                                                        ["getAsmResultNames"]>])> {
  code asmNamesDef = [{
    void $cppClass::getAsmResultNames(::mlir::OpAsmSetValueNameFn setNameFn) {
      ::ampc::graph::setAsmResultNames(getOperation(), setNameFn);
    }
  }];
  let extraClassDefinition = asmNamesDef;
}

// A node of the user's graph. `name` is the node's name. `outs` names its
// results; when it is absent, the single result is named like the node.
// `category` is the op's default AMP list; `agnostic` marks ops that only move
// or select data. Result types are inferred by `inferTypes`, written in C++
// (ops/TypeInference.cpp) unless a subclass sets `inferBody`; the verifier
// checks the op's result types against them.
//
// `forward` ops carry the AMP interface; backward and training ops do not,
// which is how the AMP pass tells a training graph. `pure` ops have no side
// effects; training updates write persistent state and are not pure.
class Graph_NodeOp<string mnemonic, string category, dag args, dag res,
                   list<Trait> traits = [], bit agnostic = 0, bit infer = 1,
                   bit forward = 1, bit pure = 1>
    : Graph_Op<mnemonic, !listconcat(!if(pure, [Pure], [MemoryEffects<[MemWrite]>]),
                                     !if(forward, [Graph_AmpOpInterface,
                                                   Graph_GradientOpInterface], []),
                                     !if(infer, [Graph_NodeTypeInference], []),
                                     traits)> {
  let arguments = !con((ins StrAttr:$name), args,
                       (ins OptionalAttr<StrArrayAttr>:$outs));
  let results = res;
  let assemblyFormat =
      "$name `(` operands `)` attr-dict `:` functional-type(operands, results)";
  code inferBody = "";
  code ampExtraDecl = "";
  let hasVerifier = infer;
  let extraClassDeclaration = [{
    static ::ampc::graph::AmpCategory getDefaultAmpCategory() {
      return ::ampc::graph::AmpCategory::}] # category # [{;
    }
    static bool isPrecisionAgnostic() { return }] # !if(agnostic, "true", "false") # [{; }
  }] # ampExtraDecl # !if(forward, [{
    ::llvm::LogicalResult buildGradients(::ampc::graph::GradBuilder &b, ::mlir::Value dy,
        ::llvm::ArrayRef<bool> wanted, ::llvm::SmallVectorImpl<::mlir::Value> &grads);
  }], "") # !if(infer, [{
    static ::llvm::LogicalResult inferTypes(::mlir::Location loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types);
    static ::llvm::LogicalResult inferNodeTypes(::mlir::Location loc,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attrs,
        ::llvm::SmallVectorImpl<::mlir::Type> &types);
  }], "");
  let extraClassDefinition = asmNamesDef # !if(infer, [{
    ::llvm::LogicalResult $cppClass::inferNodeTypes(::mlir::Location loc,
        ::mlir::ValueRange operands, ::mlir::DictionaryAttr attrs,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      Adaptor adaptor(operands, attrs);
      // Attributes are checked first: inference reads them through typed accessors.
      if (::mlir::failed(adaptor.verify(loc)))
        return ::mlir::failure();
      return inferTypes(loc, adaptor, types);
    }
    ::llvm::LogicalResult $cppClass::verify() {
      ::llvm::SmallVector<::mlir::Type> types;
      if (::mlir::failed(inferTypes(getLoc(), Adaptor(*this), types)))
        return ::mlir::failure();
      return ::ampc::graph::checkResultTypes(getOperation(), types);
    }
  }], "") # inferBody;
}

// Elementwise op of one tensor: the result has the operand's type.
class Graph_UnaryOp<string mnemonic, string category, string summaryText,
                    dag attrs = (ins), list<Trait> traits = [], bit agnostic = 0,
                    Type operandType = Graph_FloatTensor>
    : Graph_NodeOp<mnemonic, category, !con((ins operandType:$x), attrs),
                   (outs operandType:$y), traits, agnostic> {
  let summary = summaryText;
  let inferBody = [{
    ::llvm::LogicalResult $cppClass::inferTypes(::mlir::Location, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      types.push_back(adaptor.getX().getType());
      return ::mlir::success();
    }
  }];
}

// Elementwise op of two tensors with numpy broadcasting.
class Graph_BinaryOp<string mnemonic, string summaryText>
    : Graph_NodeOp<mnemonic, "Gray", (ins Graph_Tensor:$lhs, Graph_Tensor:$rhs),
                   (outs Graph_Tensor:$y)> {
  let summary = summaryText;
  let description = [{
    Elementwise, with numpy broadcasting. Both operands have the same dtype.
  }];
  let inferBody = [{
    ::llvm::LogicalResult $cppClass::inferTypes(::mlir::Location loc, Adaptor adaptor,
        ::llvm::SmallVectorImpl<::mlir::Type> &types) {
      return ::ampc::graph::inferBroadcast(loc, adaptor.getLhs().getType(),
                                           adaptor.getRhs().getType(), types);
    }
  }];
}

#endif

#ifndef AMPC_GRAPH_GRAD_BASE
#define AMPC_GRAPH_GRAD_BASE
// A backward node made by the autodiff pass.
class Graph_GradOp<string mnemonic, dag args, dag res, list<Trait> traits = []>
    : Graph_NodeOp<mnemonic, "None", args, res, traits, /*agnostic=*/0, /*infer=*/1,
                   /*forward=*/0>;

// A training update: writes the persistent buffers of its first operands in
// place (params, optimizer moments, loss-scaling counters). No results.
class Graph_UpdateOp<string mnemonic, dag args, list<Trait> traits = []>
    : Graph_NodeOp<mnemonic, "None", args, (outs), traits, /*agnostic=*/0, /*infer=*/0,
                   /*forward=*/0, /*pure=*/0> {
  let hasVerifier = 1;
}
#endif
