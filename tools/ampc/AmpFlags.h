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
/// `path`. Training keys (below) and the fp8_* keys are read as the
/// defaults of their flags.
void applyConfig(const std::string &text, const std::string &path, AmpSettings &options);

/// `args` with the training keys of its `--config` file (optimizer,
/// weight_decay, momentum, nesterov, adam_betas, adam_eps, no_decay_1d,
/// lr_schedule, warmup_steps, min_lr, lr_step_every, lr_gamma, lr_power,
/// lr_cycles, lr_decay_steps, clip_grad_norm, gradient_checkpointing, freeze, train_only, lr_scale,
/// label_smoothing, ignore_index, class_weights) as the flags of those
/// names where the command line gives none. Throws CliError naming the
/// config file for a value of a wrong type.
Args withTrainingConfig(const Args &args);

/// `e`, an error reading the options of `merged` (`given` with its
/// config's values), as the config file's error naming the key when the
/// flag it is about came from the config, not the command line; else `e`.
[[noreturn]] void rethrowNamingConfig(const UsageError &e, const Args &given,
                                      const Args &merged);

} // namespace ampc::cli

#endif
