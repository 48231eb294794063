// Loads YAML text as a YamlNode tree: the fast subset parser where the text
// stays within its subset (rules/yaml_subset.h), yaml-cpp otherwise, so that
// every YAML document loads and its errors are yaml-cpp's.
#ifndef TORCHCOST_SRC_RULES_YAML_LOAD_H_
#define TORCHCOST_SRC_RULES_YAML_LOAD_H_

#include <string_view>

#include "rules/yaml_node.h"
#include "torchcost/status.h"

namespace torchcost::rules {

// Loads `text`. On a syntax error, a ParseError with yaml-cpp's message, and
// `*error_mark` (if given) set to where it is.
Result<YamlDocument> LoadYaml(std::string_view text,
                              YamlMark* error_mark = nullptr);

// Loads `text` with yaml-cpp alone (the reference the subset parser is tested
// against).
Result<YamlDocument> LoadYamlWithYamlCpp(std::string_view text,
                                         YamlMark* error_mark = nullptr);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_YAML_LOAD_H_
