// Fuzzes the JSON graph frontend (ImportGraphJsonText): any text is a graph or
// a one-line error naming the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchcost/import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  Result<ir::Graph> g = ImportGraphJsonText(
      std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (!g.ok()) {
    const std::string& m = g.status().message();
    if (m.rfind("fuzz.json: ", 0) != 0) std::abort();
  }
  return 0;
}
