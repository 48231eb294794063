// Fuzzes --model NAME --config KEY=VAL,... (build::BuildNamedModel). An input
// "NAME CONFIG" builds NAME (fuzz/seeds/family_config.txt); any other input
// picks the family or preset by its first byte and gives it the rest. Every
// config is a model or an error, in bounded time and memory.
//
// NB: configs with more than 1000 layers (or a ResNet depth over 1000) are
// skipped: the builder accepts up to 100,000 (src/builder/validate.h), which
// builds for tens of seconds under the sanitizers; tests/builder covers the
// limit itself.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchcost/families.h"

namespace {

// Returns true if some "layers=N" or "depth=N" of `config` has N > 1000.
bool TooDeep(const std::string& config) {
  for (const char* key : {"layers=", "depth="}) {
    for (size_t at = config.find(key); at != std::string::npos; at = config.find(key, at + 1)) {
      size_t i = at + std::char_traits<char>::length(key), digits = 0;
      while (i < config.size() && config[i] == '0') ++i;
      while (i + digits < config.size() && config[i + digits] >= '0' && config[i + digits] <= '9') ++digits;
      if (digits > 4 || (digits == 4 && std::atoi(config.substr(i, 4).c_str()) > 1000)) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  static const std::vector<std::string> names = build::ModelNames();
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (TooDeep(input)) return 0;
  const size_t space = input.find(' ');
  for (const std::string& name : names) {
    if (space != std::string::npos && input.compare(0, space, name) == 0) {
      (void)build::BuildNamedModel(name, input.substr(space + 1));
      return 0;
    }
  }
  (void)build::BuildNamedModel(names[data[0] % names.size()], input.substr(1));
  return 0;
}
