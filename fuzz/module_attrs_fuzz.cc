// Fuzzes the module attributes file a TorchScript archive may carry
// (import/module_attrs.h, "torchcost_modules.json"): any text is a map of
// modules or a one-line error naming the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "import/module_attrs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<import::ModuleAttrsMap> m = import::ParseModuleAttrs(text, "m.pt: torchcost_modules.json");
  if (!m.ok()) {
    const std::string& msg = m.status().message();
    if (msg.rfind("m.pt: torchcost_modules.json", 0) != 0 || msg.find('\n') != std::string::npos) std::abort();
  }
  return 0;
}
