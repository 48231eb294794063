// Fuzzes the module attributes file a TorchScript archive may carry
// (import/module_attrs.h, "torchcost_modules.json"): any text is a map of
// modules or an error naming the file.
// NB: an error may quote a key holding a newline ("a\nb" in JSON); the CLI
// prints every message on one line (cli::OneLine), so only the name is checked.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "import/module_attrs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  const std::string text(reinterpret_cast<const char*>(data), size);
  Result<import::ModuleAttrsMap> m =
      import::ParseModuleAttrs(text, "m.pt: torchcost_modules.json");
  if (!m.ok()) {
    const std::string& msg = m.status().message();
    if (msg.rfind("m.pt: torchcost_modules.json", 0) != 0) std::abort();
  }
  return 0;
}
