// The AMP categories an op can belong to by default (docs/amp-policy.md,
// "Default lists").
#ifndef AMPC_OPS_AMPPOLICY_H
#define AMPC_OPS_AMPPOLICY_H

#include "llvm/ADT/StringRef.h"

namespace ampc::graph {

/// White ops run in the low-precision dtype, black ops stay f32, gray ops follow
/// their producers, and `None` ops (casts, constants, structure) are not decided.
enum class AmpCategory { White, Gray, Black, None };

inline llvm::StringRef toString(AmpCategory c) {
  switch (c) {
  case AmpCategory::White: return "white";
  case AmpCategory::Gray: return "gray";
  case AmpCategory::Black: return "black";
  case AmpCategory::None: return "none";
  }
  return "none";
}

} // namespace ampc::graph

#endif
