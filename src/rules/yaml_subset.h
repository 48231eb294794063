// A fast parser for the part of YAML that rule files use: block maps and
// sequences (compact `- key: value` items included), flow sequences and maps
// on one line, plain, single- and double-quoted scalars, anchors, aliases and
// comments. It builds the tree, marks included, that yaml-cpp builds from the
// same text, about ten times faster; anything outside that subset (any byte but
// printable ASCII and newlines, block
// scalars, multi-line scalars or flow collections, null values, tags,
// directives, escapes other than \" and \\, and every syntax error) is left to
// yaml-cpp (rules/yaml_load.h).
#ifndef TORCHCOST_SRC_RULES_YAML_SUBSET_H_
#define TORCHCOST_SRC_RULES_YAML_SUBSET_H_

#include <string_view>

#include "rules/yaml_node.h"
#include "torchcost/status.h"

namespace torchcost::rules {

// Parses `text` if it stays within the subset; Unimplemented (naming the first
// construct outside it) otherwise, whether or not the text is valid YAML.
Result<YamlDocument> ParseYamlSubset(std::string_view text);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_YAML_SUBSET_H_
