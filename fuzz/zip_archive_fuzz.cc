// Fuzzes the zip check that guards LibTorch's archive reader
// (import/zip_check.h): any bytes are accepted or get a one-line error.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "import/zip_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const torchcost::Status s = torchcost::import::CheckZipBytes(
      std::string_view(reinterpret_cast<const char*>(data), size));
  if (!s.ok() && s.message().empty()) std::abort();
  return 0;
}
