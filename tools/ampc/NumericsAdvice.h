// What `ampc train --check-numerics` prints (docs/precision-doctor.md): the
// first op that produced a non-finite value, its cause, and the command
// lines that fix it; how often each cause happened; the same as JSON.
#ifndef AMPC_TOOLS_AMPC_NUMERICSADVICE_H
#define AMPC_TOOLS_AMPC_NUMERICSADVICE_H

#include <set>
#include <string>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "runtime/core/JsonText.h"
#include "runtime/driver/NumericsCheck.h"

namespace ampc::cli {

/// A magnitude for reading (4 digits), and a number for a command line
/// (integers in full, others to 6 digits).
std::string num(double v);
std::string exact(double v);

/// Every value name of the user's graph: what --custom-black-varnames takes.
std::set<std::string> userValueNames(mlir::ModuleOp module);

/// The context of the advice: the command as the user gave it, the value
/// names a fix may put on the black list, L, and the loss-scaling mode.
struct AdviceContext {
  std::string command;              // "train"
  std::vector<std::string> tokens;  // its arguments as given
  std::set<std::string> values;
  std::string lowDtype = "f16", lossScaling = "dynamic";
};

/// The user's value behind a plan value: the name itself, or the value an
/// AMP cast, a renamed graph output or a gradient comes from; "" if none.
std::string userNameOf(const std::string &name, const std::set<std::string> &values);

/// The user's value that keeps the finding's op in f32 when black-listed,
/// or "" when none does.
std::string blackVarnameFor(const rt::NonFiniteFinding &f, const std::set<std::string> &values);

/// The cause's name with L spelled as the dtype ("forward overflow in f16").
std::string causeLabel(rt::NonFiniteCause cause, const std::string &lowDtype);

/// `ampc <command> <tokens>` with --option set to value (appended to a comma
/// list with `append`), as a shell line indented for advice.
std::string suggest(const AdviceContext &c, const std::string &option, const std::string &value,
                    bool append = false);

/// The report as text lines (each ends with a newline).
std::string numericsText(const rt::NumericsReport &report, const AdviceContext &context);
/// The report as JSON: {"non_finite_steps", "by_cause", "first"}.
rt::Json numericsJson(const rt::NumericsReport &report, const AdviceContext &context);

} // namespace ampc::cli

#endif
