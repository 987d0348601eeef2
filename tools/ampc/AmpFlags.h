// The AMP options of the CLI: flags and `--config FILE` (flags override it).
#ifndef AMPC_TOOLS_AMPC_AMPFLAGS_H
#define AMPC_TOOLS_AMPC_AMPFLAGS_H

#include "compiler/Lowering.h"
#include "compiler/Pipelines.h"
#include "tools/ampc/Args.h"

namespace ampc::cli {

/// --level --dtype --custom-white-list --custom-black-list --custom-gray-list
/// --custom-black-varnames --config.
std::vector<OptionSpec> ampOptionSpecs();

/// Reads the config file (if any), then the flags. Throws CliError naming the
/// config file for a bad config.
AmpSettings ampOptionsFrom(const Args &args);

/// `--no-fuse NAME,...`: the fusions to leave out (docs/cli.md); recompute
/// goes to `training` where given. Throws UsageError for an unknown name.
FusionSet fusionsFrom(const Args &args, TrainSettings *training);
/// The `--no-fuse` option.
OptionSpec noFuseOptionSpec();

/// Applies a `--config` file's text to `options`; throws CliError naming
/// `path`.
void applyConfig(const std::string &text, const std::string &path, AmpSettings &options);

} // namespace ampc::cli

#endif
