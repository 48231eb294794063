// Fuzzes the TorchScript reader that runs without LibTorch
// (import/ts_compile.h) on whole archives: any bytes are read into a graph,
// declined or refused with a one-line error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "import/ts_compile.h"
#include "import/zip_archive.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  torchcost::Result<torchcost::import::ZipArchive> zip =
      torchcost::import::ZipArchive::OpenBytes(
          std::string(reinterpret_cast<const char*>(data), size));
  if (!zip.ok()) {
    if (zip.status().message().empty()) std::abort();
    return 0;
  }
  const torchcost::Result<torchcost::ir::Graph> g =
      torchcost::import::CompileTorchScript(*zip, "fuzz.pt");
  if (!g.ok() && g.status().message().empty()) std::abort();
  return 0;
}
