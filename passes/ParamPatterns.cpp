#include "passes/ParamPatterns.h"

using namespace mlir;

namespace ampc::train {
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

bool matchesName(const llvm::GlobPattern &glob, StringRef param) {
  return llvm::any_of(namesOf(param), [&](StringRef n) { return glob.match(n); });
}

/// The module or param name nearest to `pattern` by edit distance (a third
/// of its letters, at least two, may differ), or "".
std::string nearest(StringRef pattern, graph::GraphOp g) {
  std::string best;
  unsigned bestDistance = std::max<unsigned>(2, pattern.size() / 3) + 1;
  for (graph::ParamOp p : g.getOps<graph::ParamOp>())
    for (StringRef name : namesOf(p.getName()))
      if (unsigned d = pattern.edit_distance(name, true, bestDistance); d < bestDistance)
        bestDistance = d, best = name.str();
  return best;
}

} // namespace

FailureOr<ParamPatterns> ParamPatterns::compile(graph::GraphOp g, StringRef option,
                                                ArrayRef<std::string> patterns) {
  ParamPatterns compiled;
  for (const std::string &text : patterns) {
    compiled.texts_.push_back(std::make_unique<std::string>(text));
    const std::string &pattern = *compiled.texts_.back();
    llvm::Expected<llvm::GlobPattern> glob = llvm::GlobPattern::create(pattern);
    if (!glob) {
      g.emitError(option) << ": '" << pattern
                          << "' is not a pattern: " << llvm::toString(glob.takeError());
      return failure();
    }
    if (llvm::none_of(g.getOps<graph::ParamOp>(),
                      [&](graph::ParamOp p) { return matchesName(*glob, p.getName()); })) {
      InFlightDiagnostic error = g.emitError(option) << ": '" << pattern << "' matches no param";
      if (std::string near = nearest(pattern, g); !near.empty())
        error << "; did you mean '" << near << "'?";
      return failure();
    }
    compiled.globs_.push_back(std::move(*glob));
  }
  return compiled;
}

int ParamPatterns::match(StringRef param) const {
  for (size_t i = 0; i < globs_.size(); ++i)
    if (matchesName(globs_[i], param))
      return (int)i;
  return -1;
}

} // namespace ampc::train
