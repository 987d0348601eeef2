// Backends and communicators by name. Each registers a factory; CMake lists
// the ones it builds (runtime/BuiltinBackends.cpp.in), so the only
// conditional code is the build's. A factory may refuse at run time (no GPU,
// no plugin) with a RuntimeError that says why.
#ifndef AMPC_RUNTIME_DEVICE_REGISTRY_H
#define AMPC_RUNTIME_DEVICE_REGISTRY_H

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/device/Backend.h"

namespace ampc::rt {

using BackendFactory = std::function<std::unique_ptr<Backend>()>;

void registerBackend(const std::string &name, BackendFactory factory);
/// A backend in a plugin, loaded when first asked for: `library` (found
/// beside the program, in ../lib, or where AMPC_PLUGIN_DIR says) exports
/// `extern "C" Backend *<symbol>()`. Heavy device libraries (CUDA's) are then
/// loaded only by runs that use the device.
void registerPluginBackend(const std::string &name, const std::string &library,
                           const std::string &symbol);
/// The backends this build has, sorted.
std::vector<std::string> backendNames();
/// A new backend; throws RuntimeError naming what is missing.
std::unique_ptr<Backend> createBackend(const std::string &name);
/// The target the plans of device `name` are compiled for: the target of
/// that name (cpu, cuda), else the backend's own (cuda-emulated runs cuda's).
Target targetOfDevice(const std::string &name);

/// Communicators by name ("mpi"), registered the same way.
using CommunicatorFactory = std::function<std::unique_ptr<Communicator>()>;
void registerCommunicator(const std::string &name, CommunicatorFactory factory);
/// A new communicator; throws RuntimeError when this build has none of that
/// name.
std::unique_ptr<Communicator> createCommunicator(const std::string &name);

} // namespace ampc::rt

#endif
