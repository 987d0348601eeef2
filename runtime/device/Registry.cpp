#include "runtime/device/Registry.h"

#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <unistd.h>

#include "runtime/core/Errors.h"
#include "runtime/core/Target.h"

namespace ampc::rt {

/// Registers every backend of this build (generated: BuiltinBackends.cpp.in).
void registerBuiltinBackends();

namespace {

std::map<std::string, BackendFactory> &factories() {
  static std::map<std::string, BackendFactory> f;
  return f;
}

std::map<std::string, CommunicatorFactory> &communicators() {
  static std::map<std::string, CommunicatorFactory> f;
  return f;
}

void registerOnce() {
  static std::once_flag once;
  std::call_once(once, registerBuiltinBackends);
}

} // namespace

void registerBackend(const std::string &name, BackendFactory factory) {
  factories()[name] = std::move(factory);
}

namespace {

/// Folders a plugin is looked for in: AMPC_PLUGIN_DIR, the program's own
/// folder and its ../lib (the build tree and an installed layout).
std::vector<std::string> pluginFolders() {
  std::vector<std::string> folders;
  if (const char *dir = std::getenv("AMPC_PLUGIN_DIR"))
    folders.push_back(dir);
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    std::string exe(self, n);
    std::string dir = exe.substr(0, exe.rfind('/'));
    folders.push_back(dir);
    folders.push_back(dir + "/../lib");
  }
  return folders;
}

} // namespace

void registerPluginBackend(const std::string &name, const std::string &library,
                           const std::string &symbol) {
  registerBackend(name, [name, library, symbol]() -> std::unique_ptr<Backend> {
    static void *handle = nullptr; // loaded once, kept for the process
    std::string tried;
    for (const std::string &dir : pluginFolders()) {
      if (handle)
        break;
      std::string path = dir + "/" + library;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle && access(path.c_str(), F_OK) == 0)
        throw RuntimeError("--device " + name + ": cannot load " + path + ": " + dlerror());
      tried += (tried.empty() ? "" : ", ") + dir;
    }
    // Last, by name alone: a program's rpath (an installed ampc's package
    // adds its lib/) and LD_LIBRARY_PATH.
    if (!handle) {
      handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
      std::string why = handle ? "" : dlerror();
      if (!handle && why.rfind(library + ":", 0) != 0) // found, but it did not load
        throw RuntimeError("--device " + name + ": cannot load " + library + ": " + why);
      if (!handle)
        throw RuntimeError("--device " + name + ": its plugin " + library + " is not in " +
                           tried + " nor on the library path");
    }
    using Create = Backend *(*)();
    auto create = reinterpret_cast<Create>(dlsym(handle, symbol.c_str()));
    if (!create)
      throw RuntimeError("--device " + name + ": " + library + " has no " + symbol);
    return std::unique_ptr<Backend>(create());
  });
}

std::vector<std::string> backendNames() {
  registerOnce();
  std::vector<std::string> names;
  for (const auto &[name, factory] : factories())
    names.push_back(name);
  return names;
}

std::unique_ptr<Backend> createBackend(const std::string &name) {
  registerOnce();
  auto it = factories().find(name);
  if (it != factories().end())
    return it->second();
  std::string known;
  for (const auto &[n, factory] : factories())
    known += (known.empty() ? "" : ", ") + n;
  if (findTarget(name))
    throw DeviceUnavailable("--device " + name + ": this ampc was built without the " + name +
                       " backend; it has: " + known);
  throw RuntimeError("--device " + name + ": unknown device; this ampc has: " + known);
}

Target targetOfDevice(const std::string &name) {
  if (const Target *t = findTarget(name))
    return *t;
  return createBackend(name)->target();
}

void registerCommunicator(const std::string &name, CommunicatorFactory factory) {
  communicators()[name] = std::move(factory);
}

std::unique_ptr<Communicator> createCommunicator(const std::string &name) {
  registerOnce();
  auto it = communicators().find(name);
  if (it == communicators().end())
    throw RuntimeError("data-parallel training over " + name + ": this ampc was built without " +
                       name + " (install libopenmpi-dev and rebuild)");
  return it->second();
}

} // namespace ampc::rt
