// Fuzzes rule files (RuleSet::AddText): any YAML is a set of rules or a
// one-line error naming the file. Differentially too: what the fast YAML subset
// parser reads, yaml-cpp reads as the same tree.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "rules/yaml_load.h"
#include "rules/yaml_subset.h"
#include "torchcost/rules.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace torchcost;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<rules::YamlDocument> fast = rules::ParseYamlSubset(text);
  if (fast.ok()) {
    Result<rules::YamlDocument> reference = rules::LoadYamlWithYamlCpp(text);
    if (!reference.ok() ||
        !rules::SameYamlTree(fast->root(), reference->root()))
      std::abort();
  }
  RuleSet rules;
  Status s = rules.AddText(text, "fuzz.yaml");
  if (!s.ok() && (s.message().rfind("fuzz.yaml", 0) != 0)) std::abort();
  if (s.ok()) (void)rules.OpNames();
  return 0;
}
