// ImportTorchScript: reads a TorchScript archive without LibTorch where it
// can (ts_compile.h), and otherwise loads the TorchScript reader plugin
// (libtorchcost_torchscript.so, the only code that links LibTorch) on first
// use and calls it, so that a program that reads no .pt file, or only .pt
// files of traced modules, never loads LibTorch (it costs ~0.35 s and
// ~150 MiB at load).
//
// $TORCHCOST_TORCHSCRIPT_READER picks the reader: "auto" (the default: the
// reader without LibTorch, and the plugin, silently, for an archive it
// declines), "fast" (never the plugin: a declined archive is an error) or
// "libtorch" (always the plugin).
//
// The plugin is looked for, in order: at $TORCHCOST_TORCHSCRIPT_PLUGIN (only
// there, if set); next to the program or library that holds this code, and in
// its ../lib (an installed bin/ beside lib/); in the build tree that built it;
// in the install's library directory.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "import/torchscript_plugin.h"
#include "import/ts_compile.h"
#include "import/zip_archive.h"
#include "import/zip_check.h"
#include "torchcost/import.h"

namespace torchcost {
namespace {

// The loaded plugin, or why there is none.
struct Plugin {
  TorchcostPluginReadFn read = nullptr;
  // Non-empty if read is null: one line, without the model file's name.
  std::string error;
};

enum class Reader { kAuto, kFast, kLibTorch };

Result<Reader> ChosenReader() {
  const char* env = std::getenv("TORCHCOST_TORCHSCRIPT_READER");
  const std::string v = env == nullptr ? "" : env;
  if (v.empty() || v == "auto") return Reader::kAuto;
  if (v == "fast") return Reader::kFast;
  if (v == "libtorch") return Reader::kLibTorch;
  return Status::InvalidArgument("TORCHCOST_TORCHSCRIPT_READER is '" + v +
                                 "'; expected auto, fast or libtorch");
}

#if TORCHCOST_WITH_LIBTORCH

// Returns the directory of the program or shared library holding this code.
std::string OwnDirectory() {
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&OwnDirectory), &info) == 0 ||
      info.dli_fname == nullptr)
    return "";
  std::string file = info.dli_fname;
  // NB: the main program's name may lack its directory.
  if (file.find('/') == std::string::npos) {
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
    plugin->error = "cannot load the TorchScript reader " + path + ": " +
                    (why ? why : "unknown error");
    return false;
  }
  // NB: the plugin is never unloaded: graphs it made keep its shape inference.
  auto abi = reinterpret_cast<TorchcostPluginAbiFn>(
      dlsym(handle, TORCHCOST_PLUGIN_ABI_SYMBOL));
  auto read = reinterpret_cast<TorchcostPluginReadFn>(
      dlsym(handle, TORCHCOST_PLUGIN_READ_SYMBOL));
  if (abi == nullptr || read == nullptr) {
    plugin->error = path +
                    " is not torchcost's TorchScript reader "
                    "(no " TORCHCOST_PLUGIN_READ_SYMBOL ")";
    return false;
  }
  if (std::string(abi()) != TORCHCOST_PLUGIN_ABI) {
    plugin->error = "the TorchScript reader " + path +
                    " was built from another torchcost (" + abi() +
                    ", this is " TORCHCOST_PLUGIN_ABI ")";
    return false;
  }
  plugin->read = read;
  return true;
}

Plugin LoadPlugin() {
  Plugin plugin;
  if (const char* env = std::getenv("TORCHCOST_TORCHSCRIPT_PLUGIN");
      env != nullptr && *env != '\0') {
    if (access(env, R_OK) != 0) {
      plugin.error =
          "TORCHCOST_TORCHSCRIPT_PLUGIN: no such file: " + std::string(env);
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
  plugin.error =
      std::string("reading TorchScript needs the plugin ") +
      TORCHCOST_PLUGIN_NAME +
      ", not found next to the program, in its " TORCHCOST_PLUGIN_BIN_TO_LIB
      " or in " TORCHCOST_PLUGIN_INSTALL_DIR
      " (set TORCHCOST_TORCHSCRIPT_PLUGIN to its path)";
  return plugin;
}

const Plugin& ThePlugin() {
  // NB: loaded once, on first use (thread-safe).
  static const Plugin plugin = LoadPlugin();
  return plugin;
}

// The plugin's graph of the same archive, read on the first shape inference a
// graph of the reader without LibTorch is asked for, and its values by the
// other graph's indices.
struct Delegate {
  std::once_flag once;
  std::shared_ptr<Result<ir::Graph>> graph;
  // Plugin value index -> the same value in the other graph, or -1.
  std::vector<int> to_fast;
  std::string error;
};

// What of a graph the delegate needs to pair values: node ops, inputs and
// outputs.
struct Skeleton {
  std::vector<std::string> ops;
  std::vector<ir::ValueIds> node_inputs, node_outputs;
  std::vector<int> inputs;
  size_t values = 0;
};

bool Pair(const Skeleton& fast, const ir::Graph& g, std::vector<int>* to_fast) {
  if (g.nodes.size() != fast.ops.size() ||
      g.inputs.size() != fast.inputs.size())
    return false;
  to_fast->assign(g.values.size(), -1);
  auto pair = [&](const auto& a, const auto& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) (*to_fast)[a[k]] = b[k];
    return true;
  };
  if (!pair(g.inputs, fast.inputs)) return false;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    if (g.nodes[i].op != fast.ops[i] ||
        !pair(g.nodes[i].inputs, fast.node_inputs[i]) ||
        !pair(g.nodes[i].outputs, fast.node_outputs[i])) {
      return false;
    }
  }
  return true;
}

// Gives a graph read without LibTorch the plugin's shape inference, loaded only
// if asked for.
void DelegateShapeInference(const std::string& path, ir::Graph* graph) {
  auto skeleton = std::make_shared<Skeleton>();
  for (const ir::Node& n : graph->nodes) {
    skeleton->ops.push_back(n.op);
    skeleton->node_inputs.push_back(n.inputs);
    skeleton->node_outputs.push_back(n.outputs);
  }
  skeleton->inputs = graph->inputs;
  skeleton->values = graph->values.size();
  auto delegate = std::make_shared<Delegate>();
  graph->infer_shapes =
      [path, skeleton, delegate](
          int origin, const std::function<ir::ExampleValue(int)>& example_of,
          std::vector<ir::ExampleValue>* outputs, std::string* why) {
        std::call_once(delegate->once, [&] {
          const Plugin& plugin = ThePlugin();
          if (plugin.read == nullptr) {
            delegate->error = plugin.error;
            return;
          }
          delegate->graph = std::make_shared<Result<ir::Graph>>(
              Status::Internal("the TorchScript reader returned nothing"));
          plugin.read(&path, delegate->graph.get());
          if (!delegate->graph->ok()) {
            delegate->error = delegate->graph->status().message();
          } else if (!(*delegate->graph)->infer_shapes) {
            delegate->error = "LibTorch's reader has no shape inference for it";
          } else if (!Pair(*skeleton, **delegate->graph, &delegate->to_fast)) {
            delegate->error =
                "LibTorch's reader made another graph of this archive";
          }
        });
        if (!delegate->error.empty()) {
          *why = delegate->error;
          return false;
        }
        const std::vector<int>& to_fast = delegate->to_fast;
        auto mapped = [&](int index) {
          const int fast =
              index >= 0 && index < static_cast<int>(to_fast.size())
                  ? to_fast[index]
                  : -1;
          return fast >= 0 ? example_of(fast) : ir::ExampleValue();
        };
        return (*delegate->graph)->infer_shapes(origin, mapped, outputs, why);
      };
}

#else  // !TORCHCOST_WITH_LIBTORCH

Plugin LoadPlugin() {
  Plugin plugin;
  plugin.error =
      "cannot read TorchScript: torchcost was built without LibTorch "
      "(TORCHCOST_WITH_LIBTORCH=OFF); "
      "export the model as a JSON graph instead (python3 -m tools.export)";
  return plugin;
}

#endif  // TORCHCOST_WITH_LIBTORCH

}  // namespace

Result<ir::Graph> ImportTorchScript(const std::string& path) {
  // NB: the file and its zip container are checked here, before the plugin
  // (and LibTorch) is loaded, so that a missing, truncated or corrupt archive
  // is a one-line error of ours that LibTorch's reader never sees
  // (zip_check.h).
  const std::string prefix = path + ": cannot read TorchScript archive: ";
  std::error_code ec;
  if (!std::filesystem::exists(path, ec))
    return Status::NotFound(prefix + "no such file");
  if (std::filesystem::is_directory(path, ec))
    return Status::InvalidArgument(prefix + "is a directory");
  TORCHCOST_ASSIGN_OR_RETURN(const Reader reader, ChosenReader());
  if (reader == Reader::kLibTorch) {
    if (Status zip = import::CheckZipFile(path); !zip.ok())
      return Status(zip.code(), prefix + zip.message());
  } else {
    Result<import::ZipArchive> archive = import::ZipArchive::OpenFile(path);
    if (!archive.ok())
      return Status(archive.status().code(),
                    prefix + archive.status().message());
    Result<ir::Graph> fast = import::CompileTorchScript(*archive, path);
    if (fast.ok()) {
#if TORCHCOST_WITH_LIBTORCH
      DelegateShapeInference(path, &*fast);
#endif
      return fast;
    }
    // NB: in auto mode any failure, a decline or an error, is left to
    // LibTorch's reader, whose word is final.
    if (reader == Reader::kFast) {
      return Status(
          fast.status().code(),
          path + ": cannot read this TorchScript archive without LibTorch: " +
              fast.status().message());
    }
#if !TORCHCOST_WITH_LIBTORCH
    return Status::Unimplemented(
        path + ": " + LoadPlugin().error +
        " (read without LibTorch: " + fast.status().message() + ")");
#endif
  }
#if !TORCHCOST_WITH_LIBTORCH
  return Status::Unimplemented(path + ": " + LoadPlugin().error);
#else
  const Plugin& plugin = ThePlugin();
  if (plugin.read == nullptr)
    return Status::Unimplemented(path + ": " + plugin.error);
  Result<ir::Graph> out =
      Status::Internal(path + ": the TorchScript reader returned nothing");
  plugin.read(&path, &out);
  return out;
#endif  // TORCHCOST_WITH_LIBTORCH
}

}  // namespace torchcost
