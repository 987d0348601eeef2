// Reading and writing the project's files. Inputs must be regular files (a
// directory or a device is an error, not a hang). Outputs go to a new
// temporary file beside the target, created exclusively so that it can never
// be a user's file, and are renamed over the target: a failed write leaves
// the old file, or none. A symlink is written through (its target is replaced
// and the link kept, as editors do); a directory, device, FIFO or socket is
// refused. Errors come back as one-line reasons for the caller's error type.
#ifndef AMPC_RUNTIME_CORE_FILES_H
#define AMPC_RUNTIME_CORE_FILES_H

#include <functional>
#include <optional>
#include <ostream>
#include <string>

namespace ampc::rt {

/// The contents of regular file `path`, or nullopt with `error` set to why
/// not ("No such file or directory", "it is a directory").
std::optional<std::string> readFile(const std::string &path, std::string &error);

/// Why `path` cannot be written (its directory is missing or not writable,
/// or it names something that is not a regular file), or "" when it can.
/// Checks before a long run, so that it fails at once rather than at the end.
std::string checkWritable(const std::string &path);

/// Writes what `write` puts in the stream to `path` atomically; `write`
/// returns false to abandon the file. Returns "" or the reason it failed.
std::string writeFileAtomically(const std::string &path,
                                const std::function<bool(std::ostream &)> &write);
std::string writeFileAtomically(const std::string &path, const std::string &contents);

} // namespace ampc::rt

#endif
