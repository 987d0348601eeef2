// The AMP options of the CLI: flags and `--config FILE` (flags override it).
#ifndef AMPC_TOOLS_AMPC_AMPFLAGS_H
#define AMPC_TOOLS_AMPC_AMPFLAGS_H

#include "compiler/Pipelines.h"
#include "tools/ampc/Args.h"

namespace ampc::cli {

/// --level --dtype --custom-white-list --custom-black-list --custom-gray-list
/// --custom-black-varnames --config.
std::vector<OptionSpec> ampOptionSpecs();

/// Reads the config file (if any), then the flags. Throws CliError naming the
/// config file for a bad config.
AmpSettings ampOptionsFrom(const Args &args);

/// Applies a `--config` file's text to `options`; throws CliError naming
/// `path`.
void applyConfig(const std::string &text, const std::string &path, AmpSettings &options);

} // namespace ampc::cli

#endif
