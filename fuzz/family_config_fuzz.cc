// Fuzzes --model NAME --config KEY=VAL,... (builder::BuildNamedModel). An input
// "NAME CONFIG" builds NAME (fuzz/seeds/family_config.txt); any other input
// picks the family or preset by its first byte and gives it the rest. Every
// config is a model or an error, in bounded time and memory.
//
// NB: configs with more than 1000 layers (a ResNet depth over 1000, or its
// blocks= counts summing past 1000) are skipped: the builder accepts up to
// 100,000 (src/builder/validate.h), which builds for tens of seconds under the
// sanitizers (past -timeout); tests/builder covers the limit itself.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "torchcost/families.h"

namespace {

// Returns true if some "layers=N" or "depth=N" of `config` has N > 1000, or
// the block counts of some "blocks=n1:n2:n3:n4" sum past 1000.
bool TooDeep(const std::string& config) {
  // Reads the digits at `i` (leading zeros skipped) as a number, capped at
  // 10,000.
  auto number = [&config](size_t& i) {
    while (i < config.size() && config[i] == '0') ++i;
    long n = 0;
    while (i < config.size() && config[i] >= '0' && config[i] <= '9') {
      n = std::min(10000L, n * 10 + (config[i++] - '0'));
    }
    return n;
  };
  for (const char* key : {"layers=", "depth=", "blocks="}) {
    for (size_t at = config.find(key); at != std::string::npos;
         at = config.find(key, at + 1)) {
      size_t i = at + std::char_traits<char>::length(key);
      long total = number(i);
      while (key[0] == 'b' && i < config.size() && config[i] == ':')
        total += number(++i);
      if (total > 1000) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  static const std::vector<std::string> names = builder::ModelNames();
  if (size == 0) return 0;
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (TooDeep(input)) return 0;
  const size_t space = input.find(' ');
  for (const std::string& name : names) {
    if (space != std::string::npos && input.compare(0, space, name) == 0) {
      (void)builder::BuildNamedModel(name, input.substr(space + 1));
      return 0;
    }
  }
  (void)builder::BuildNamedModel(names[data[0] % names.size()],
                                 input.substr(1));
  return 0;
}
