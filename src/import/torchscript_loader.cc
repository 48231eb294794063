// ImportTorchScript: loads the TorchScript reader plugin
// (libtorchcost_torchscript.so, the only code that links LibTorch) on first
// use and calls it, so that a program that reads no .pt file never loads
// LibTorch (it costs ~0.35 s and ~150 MiB at load).
//
// The plugin is looked for, in order: at $TORCHCOST_TORCHSCRIPT_PLUGIN (only
// there, if set); next to the program or library that holds this code, and in
// its ../lib (an installed bin/ beside lib/); in the build tree that built it;
// in the install's library directory.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "import/torchscript_plugin.h"
#include "import/zip_check.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

// The loaded plugin, or why there is none.
struct Plugin {
  TorchcostPluginReadFn read = nullptr;
  std::string error;  // Non-empty if read is null: one line, without the model file's name.
};

#if TORCHCOST_WITH_LIBTORCH

// Returns the directory of the program or shared library holding this code.
std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string file = info.dli_fname;
  if (file.find('/') == std::string::npos) {  // NB: the main program's name may lack its directory.
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n <= 0) return "";
    file.assign(buf, static_cast<size_t>(n));
  }
  return file.substr(0, file.rfind('/'));
}

// Returns the places to look for the plugin, best first.
std::vector<std::string> Candidates() {
  std::vector<std::string> out;
  const std::string name = TORCHCOST_PLUGIN_NAME;
  const std::string own = OwnDirectory();
  if (!own.empty()) {
    out.push_back(own + "/" + name);
    out.push_back(own + "/" TORCHCOST_PLUGIN_BIN_TO_LIB "/" + name);
  }
#ifdef TORCHCOST_PLUGIN_BUILD_DIR
  out.push_back(std::string(TORCHCOST_PLUGIN_BUILD_DIR) + "/" + name);
#endif
  out.push_back(std::string(TORCHCOST_PLUGIN_INSTALL_DIR) + "/" + name);
  return out;
}

// Opens the plugin at `path` and checks it; sets plugin->error on failure.
bool Open(const std::string& path, Plugin* plugin) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    plugin->error = "cannot load the TorchScript reader " + path + ": " + (why ? why : "unknown error");
    return false;
  }
  // NB: the plugin is never unloaded: graphs it made keep its shape inference.
  auto abi = reinterpret_cast<TorchcostPluginAbiFn>(dlsym(handle, TORCHCOST_PLUGIN_ABI_SYMBOL));
  auto read = reinterpret_cast<TorchcostPluginReadFn>(dlsym(handle, TORCHCOST_PLUGIN_READ_SYMBOL));
  if (abi == nullptr || read == nullptr) {
    plugin->error = path + " is not torchcost's TorchScript reader (no " TORCHCOST_PLUGIN_READ_SYMBOL ")";
    return false;
  }
  if (std::string(abi()) != TORCHCOST_PLUGIN_ABI) {
    plugin->error = "the TorchScript reader " + path + " was built from another torchcost (" + abi() +
                    ", this is " TORCHCOST_PLUGIN_ABI ")";
    return false;
  }
  plugin->read = read;
  return true;
}

Plugin LoadPlugin() {
  Plugin plugin;
  if (const char* env = std::getenv("TORCHCOST_TORCHSCRIPT_PLUGIN"); env != nullptr && *env != '\0') {
    if (access(env, R_OK) != 0) {
      plugin.error = "TORCHCOST_TORCHSCRIPT_PLUGIN: no such file: " + std::string(env);
    } else {
      Open(env, &plugin);
    }
    return plugin;
  }
  for (const std::string& path : Candidates()) {
    if (access(path.c_str(), R_OK) == 0) {
      Open(path, &plugin);
      return plugin;
    }
  }
  plugin.error = std::string("reading TorchScript needs the plugin ") + TORCHCOST_PLUGIN_NAME +
                 ", not found next to the program, in its " TORCHCOST_PLUGIN_BIN_TO_LIB
                 " or in " TORCHCOST_PLUGIN_INSTALL_DIR " (set TORCHCOST_TORCHSCRIPT_PLUGIN to its path)";
  return plugin;
}

#else  // !TORCHCOST_WITH_LIBTORCH

Plugin LoadPlugin() {
  Plugin plugin;
  plugin.error =
      "cannot read TorchScript: torchcost was built without LibTorch (TORCHCOST_WITH_LIBTORCH=OFF); "
      "export the model as a JSON graph instead (python3 -m tools.export)";
  return plugin;
}

#endif  // TORCHCOST_WITH_LIBTORCH

}  // namespace

Result<ir::Graph> ImportTorchScript(const std::string& path) {
#if !TORCHCOST_WITH_LIBTORCH
  return Status::Unimplemented(path + ": " + LoadPlugin().error);
#else
  // NB: the file and its zip container are checked here, before the plugin
  // (and LibTorch) is loaded, so that a missing, truncated or corrupt archive
  // is a one-line error of ours that LibTorch's reader never sees (zip_check.h).
  const std::string prefix = path + ": cannot read TorchScript archive: ";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Status::NotFound(prefix + "no such file");
  if (std::filesystem::is_directory(path, ec)) return Status::InvalidArgument(prefix + "is a directory");
  if (Status zip = import::CheckZipFile(path); !zip.ok()) return Status(zip.code(), prefix + zip.message());
  static const Plugin plugin = LoadPlugin();  // NB: loaded once, on the first .pt (thread-safe).
  if (plugin.read == nullptr) return Status::Unimplemented(path + ": " + plugin.error);
  Result<ir::Graph> out = Status::Internal(path + ": the TorchScript reader returned nothing");
  plugin.read(&path, &out);
  return out;
#endif  // TORCHCOST_WITH_LIBTORCH
}

}  // namespace torchcost
