// Fuzzes rule files (RuleSet::AddText): any YAML is a set of rules or a
// one-line error naming the file.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "torchcost/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  RuleSet rules;
  Status s = rules.AddText(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.yaml");
  if (!s.ok() && (s.message().rfind("fuzz.yaml", 0) != 0)) std::abort();
  if (s.ok()) (void)rules.OpNames();
  return 0;
}
