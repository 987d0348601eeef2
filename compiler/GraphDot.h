// `ampc dot`: the graph as Graphviz, nodes coloured by compute dtype.
#ifndef AMPC_COMPILER_GRAPHDOT_H
#define AMPC_COMPILER_GRAPHDOT_H

#include <map>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"

namespace ampc {

/// Another colouring of the nodes (the precision doctor's headroom): per
/// node name a fill colour and a line added to its label; nodes without an
/// entry are white. The legend lists (label, fill) pairs under `title`.
struct DotOverlay {
  std::map<std::string, std::pair<std::string, std::string>> nodes;
  std::string title;
  std::vector<std::pair<std::string, std::string>> legend;
};

/// Boxes for nodes (f32 blue, f16 orange, bf16 gold), red diamonds for casts,
/// grey ellipses for inputs, params and consts; edges carry the value's dtype.
/// With `overlay`, nodes take its fills and label lines instead.
std::string exportDot(mlir::ModuleOp module, const DotOverlay *overlay = nullptr);

} // namespace ampc

#endif
