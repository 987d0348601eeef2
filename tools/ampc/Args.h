// Command-line parsing for `ampc` subcommands: positionals, `--flag`,
// `--opt value` / `--opt=value` and repeatable options, with the errors users see.
#ifndef AMPC_TOOLS_AMPC_ARGS_H
#define AMPC_TOOLS_AMPC_ARGS_H

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace ampc::cli {

/// A usage mistake: unknown flag, missing value, bad value.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct OptionSpec {
  std::string name;      // without the leading dashes
  bool takesValue = true;
  bool repeatable = false;
  std::string help;
};

class Args {
public:
  /// Parses `argv[first..argc)` against `specs`; `-o` is an alias of `--output`.
  Args(int argc, char **argv, int first, const std::vector<OptionSpec> &specs);

  const std::vector<std::string> &positionals() const { return positionals_; }
  bool has(const std::string &name) const { return values_.count(name) > 0; }
  std::optional<std::string> get(const std::string &name) const;
  std::vector<std::string> getAll(const std::string &name) const;
  /// An integer option in [min, max], or `dflt` when absent.
  int64_t getInt(const std::string &name, int64_t dflt, int64_t min = 1,
                 int64_t max = kMaxCount) const;
  /// A finite number option in [min, max], or `dflt` when absent.
  double getNumber(const std::string &name, double dflt, double min, double max) const;
  /// A file name option, or "" when absent; an empty name is an error.
  std::string getFile(const std::string &name) const;
  /// Every file name a repeated option gives, in order; an empty one is an
  /// error.
  std::vector<std::string> getFiles(const std::string &name) const;
  /// The arguments as given, after the command name.
  const std::vector<std::string> &tokens() const { return tokens_; }
  /// Option `name` takes `value` where the command line did not give it (a
  /// config file's keys: flags override them); "" for a flag.
  void setDefault(const std::string &name, const std::string &value) {
    if (!has(name))
      values_[name] = {value};
  }

  /// Counts (steps, epochs, batches) stay below this, so products of two fit.
  static constexpr int64_t kMaxCount = int64_t(1) << 31;

private:
  std::vector<std::string> tokens_, positionals_;
  std::map<std::string, std::vector<std::string>> values_;
};

/// `tokens` with option `--name` set to `value`: an existing value is
/// replaced, or with `append` extended as a comma list; an absent option is
/// added at the end.
std::vector<std::string> withOption(std::vector<std::string> tokens, const std::string &name,
                                    const std::string &value, bool append = false);
/// `tokens` without option `--name` (and its value, when it takes one).
std::vector<std::string> withoutOption(std::vector<std::string> tokens, const std::string &name,
                                       bool takesValue);
/// A command line a shell reads back as `words`: words with characters
/// other than letters, digits and `-_./:=,+%@` are quoted.
std::string shellLine(const std::vector<std::string> &words);

/// The comma-separated items of `text`, empty ones left out.
std::vector<std::string> splitCommas(const std::string &text);

/// `items` joined by commas.
std::string joinCommas(const std::vector<std::string> &items);

/// The one of `names` nearest `name` where it is near (a third of its
/// letters, at least two, differ), for "did you mean" hints; else "".
std::string nearestName(const std::string &name, const std::vector<std::string> &names);

/// `text` as one line: newlines, tabs, other control characters and bytes
/// that are not UTF-8 (in a user's names) written as escapes.
std::string oneLine(const std::string &text);
/// Prints `<tool>: error: <message>` (one line) to stderr; returns 1.
int reportError(const char *tool, const std::string &message);

/// One line per option, for --help.
std::string describeOptions(const std::vector<OptionSpec> &specs);

} // namespace ampc::cli

#endif
