// Fuzzes the unpickler of TorchScript archives (import/ts_pickle.h): any
// bytes unpickle or get a one-line error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "import/ts_pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto v = torchcost::import::Unpickle(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!v.ok() && v.status().message().empty()) std::abort();
  return 0;
}
