// Reads one rule file (YAML) into compiled OpRules; errors are "file:line:col:
// message".
#ifndef TORCHCOST_SRC_RULES_RULE_PARSER_H_
#define TORCHCOST_SRC_RULES_RULE_PARSER_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "rules/op_rule.h"
#include "torchcost/status.h"

namespace torchcost::rules {

// The contents of one rule file.
struct RuleFile {
  std::vector<std::unique_ptr<OpRule>> rules;
  std::vector<std::string> ignored;  // Ops listed under `ignored:`.
  std::vector<int> ignored_lines;
};

// Parses and compiles the YAML text of a rule file named `file`. `line_of`, if
// given, maps each line of `text` (0-based) to its line in `file`: `text` is
// then part of the file (rules/rule_chunks.h), and positions are the file's.
Result<RuleFile> ParseRuleFile(std::string_view text, const std::string& file,
                               const std::vector<int>* line_of = nullptr);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_RULE_PARSER_H_
