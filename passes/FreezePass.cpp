// graph-freeze: freezes params by name, as `requires_grad = False` does in
// PyTorch and `trainable = False` in Keras (docs/training.md, "Freezing").
//
// Algorithm: compile each pattern as a glob; a pattern matches a param when
// it matches its whole name or one of its modules (the name up to a dot).
// A param matched by a `freeze` pattern, or by no `train-only` pattern when
// there are some, gets `trainable = false`; autodiff then builds no backward
// for what only frozen params feed, and the optimizer keeps no state for
// them. Patterns that match nothing are errors, with the nearest name.
#include "llvm/Support/GlobPattern.h"
#include "passes/Passes.h"
#include "passes/TrainingUtil.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFREEZE
#include "passes/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// A param's name and the modules it sits in: `a.b.w` gives `a`, `a.b` and
/// `a.b.w`.
SmallVector<StringRef> namesOf(StringRef param) {
  SmallVector<StringRef> names;
  for (size_t dot = param.find('.'); dot != StringRef::npos; dot = param.find('.', dot + 1))
    names.push_back(param.take_front(dot));
  names.push_back(param);
  return names;
}

/// The module or param name nearest to `pattern` by edit distance, or "".
std::string nearest(StringRef pattern, ArrayRef<graph::ParamOp> params) {
  std::string best;
  unsigned bestDistance = std::max<unsigned>(2, pattern.size() / 3) + 1;
  for (graph::ParamOp p : params)
    for (StringRef name : namesOf(p.getName()))
      if (unsigned d = pattern.edit_distance(name, true, bestDistance); d < bestDistance)
        bestDistance = d, best = name.str();
  return best;
}

struct GraphFreezePass : impl::GraphFreezeBase<GraphFreezePass> {
  using GraphFreezeBase::GraphFreezeBase;

  /// The globs of `patterns`, each checked to match some param; nullopt
  /// after an error.
  std::optional<std::vector<llvm::GlobPattern>>
  compile(StringRef option, ArrayRef<std::string> patterns, ArrayRef<graph::ParamOp> params) {
    graph::GraphOp g = getOperation();
    std::vector<llvm::GlobPattern> globs;
    for (const std::string &pattern : patterns) {
      llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
      if (!glob) {
        g.emitError(option) << ": '" << pattern << "' is not a pattern: "
                            << llvm::toString(glob.takeError());
        return std::nullopt;
      }
      if (llvm::none_of(params, [&](graph::ParamOp p) { return matches(*glob, p); })) {
        InFlightDiagnostic error = g.emitError(option)
                                   << ": '" << pattern << "' matches no param";
        if (std::string near = nearest(pattern, params); !near.empty())
          error << "; did you mean '" << near << "'?";
        return std::nullopt;
      }
      globs.push_back(std::move(*glob));
    }
    return globs;
  }

  static bool matches(const llvm::GlobPattern &glob, graph::ParamOp p) {
    return llvm::any_of(namesOf(p.getName()), [&](StringRef n) { return glob.match(n); });
  }

  void runOnOperation() override {
    graph::GraphOp g = getOperation();
    std::vector<graph::ParamOp> params(g.getOps<graph::ParamOp>().begin(),
                                       g.getOps<graph::ParamOp>().end());
    auto frozen = compile("freeze", freeze, params);
    auto kept = compile("train-only", trainOnly, params);
    if (!frozen || !kept)
      return signalPassFailure();
    auto any = [](const std::vector<llvm::GlobPattern> &globs, graph::ParamOp p) {
      return llvm::any_of(globs, [&](const llvm::GlobPattern &glob) { return matches(glob, p); });
    };
    bool wasTrainable = !train::trainableParams(g).empty();
    Builder b(&getContext());
    for (graph::ParamOp p : params)
      if (any(*frozen, p) || (!kept->empty() && !any(*kept, p)))
        p.setTrainableAttr(b.getBoolAttr(false));
    if (wasTrainable && train::trainableParams(g).empty()) {
      g.emitError("freeze: every param is frozen; nothing is left to train");
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace ampc
