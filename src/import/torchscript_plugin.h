// The interface between ImportTorchScript (src/import/torchscript_loader.cc)
// and the TorchScript reader plugin it loads (libtorchcost_torchscript.so,
// built from src/import/torchscript.cc, the only code that links LibTorch).
#ifndef TORCHCOST_SRC_IMPORT_TORCHSCRIPT_PLUGIN_H_
#define TORCHCOST_SRC_IMPORT_TORCHSCRIPT_PLUGIN_H_

#include <string>

#include "torchcost/graph.h"
#include "torchcost/status.h"

// NB: C++ types cross the boundary, so both sides must be built from the same
// headers with the same compiler: the plugin's ABI string (the version and a
// hash of graph.h and status.h, set by CMake) must equal the loader's.
#define TORCHCOST_PLUGIN_ABI_SYMBOL "torchcost_torchscript_abi"
#define TORCHCOST_PLUGIN_READ_SYMBOL "torchcost_torchscript_read"

extern "C" {
// Returns the plugin's ABI string.
using TorchcostPluginAbiFn = const char* (*)();
// Reads the TorchScript archive at *path into *out; never throws.
using TorchcostPluginReadFn = void (*)(
    const std::string* path, torchcost::Result<torchcost::ir::Graph>* out);
}

namespace torchcost::import {

// Reads a TorchScript archive with LibTorch (the plugin's implementation of
// ImportTorchScript; defined in src/import/torchscript.cc).
Result<ir::Graph> ReadTorchScript(const std::string& path);

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_TORCHSCRIPT_PLUGIN_H_
