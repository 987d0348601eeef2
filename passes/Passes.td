#ifndef AMPC_PASSES
#define AMPC_PASSES

include "mlir/Pass/PassBase.td"

def GraphAmp : Pass<"graph-amp", "::ampc::graph::GraphOp"> {
  let summary = "Automatic mixed precision: decides each node's dtype and inserts casts";
  let description = [{
    Decides, per node, whether it computes in the low-precision dtype L (f16 or
    bf16) or stays f32, following the white/gray/black lists of the ops'
    AmpOpInterface, the custom lists and the custom black varnames, at level
    O0 (no change), O1 (lists), O2 (all but black in L, params stored in L
    with f32 masters) or O3 (everything but the loss in L). Then inserts one
    cast per (value, dtype) where an operand's dtype differs from what its
    consumer computes in. See docs/amp-policy.md.
  }];
  let options = [
    Option<"level", "level", "std::string", /*default=*/"\"O1\"",
           "O0, O1, O2 or O3">,
    Option<"dtype", "dtype", "std::string", /*default=*/"\"f16\"",
           "the low-precision dtype: f16 or bf16">,
    ListOption<"customWhiteList", "custom-white-list", "std::string",
               "ops moved to the white list">,
    ListOption<"customBlackList", "custom-black-list", "std::string",
               "ops moved to the black list">,
    ListOption<"customGrayList", "custom-gray-list", "std::string",
               "ops moved to the gray list">,
    ListOption<"customBlackVarnames", "custom-black-varnames", "std::string",
               "values whose producers and consumers stay f32">,
    Option<"moveCastsUpstream", "move-casts-upstream", "bool", /*default=*/"true",
           "rule 4: precision-agnostic ops take their cast upstream; false gives "
           "Paddle's rule, for comparison">,
  ];
}

def GraphFoldCasts : Pass<"graph-fold-casts", "::ampc::graph::GraphOp"> {
  let summary = "Folds chains of float casts and removes no-op and dead casts";
  let description = [{
    Applies graph.cast's canonicalization patterns to the casts of a graph
    only: `cast(cast(x))` becomes one cast or none, a cast to its operand's
    own dtype disappears (unless it writes a graph output), and casts left
    without users are erased. Other nodes are never touched, even if unused.
  }];
}

#endif
