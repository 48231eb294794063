// Splits a rule file's text into chunks that compile on their own, indexed by
// op name, without parsing the YAML: what lets the built-in rules compile one
// rule the first time its op is looked up instead of all of them at start.
#ifndef TORCHCOST_SRC_RULES_RULE_CHUNKS_H_
#define TORCHCOST_SRC_RULES_RULE_CHUNKS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/status.h"

namespace torchcost::rules {

// One rule of a file: where its text is and the op names it covers.
struct RuleSpan {
  int first_line = 0;  // 0-based, the line of its `- op:`.
  int end_line = 0;    // 0-based, one past its last line.
  std::vector<std::string> ops;
};

// What compiles to one rule: the rule (last) preceded, in file order, by the
// rules whose YAML anchors (`&name`) it uses as aliases (`*name`), directly or
// through them. Compiling it compiles those too; only the last is the chunk's.
struct RuleChunk {
  std::vector<RuleSpan> rules;
};

// A rule file split into chunks.
struct SplitFile {
  std::vector<RuleChunk> chunks;  // One per rule, in file order.
  int version_line = -1;          // 0-based line of `version:`; -1 if none.
  int rules_line = -1;            // 0-based line of `rules:`; -1 if none.
  // The lines of the `ignored:` section, its key included; empty if none.
  int ignored_first_line = -1, ignored_end_line = -1;
  // The ignored ops, where the section is a block list of plain names (the
  // usual form); else empty with `ignored_read` false: compile the section.
  std::vector<std::string> ignored;
  bool ignored_read = false;
  // The offset of each line of the text split, and its size, so that
  // ChunkAsFile need not split the whole text again for each chunk.
  std::vector<uint32_t> line_starts;
  size_t text_size = 0;
};

// Splits `text`, a rule file in the format of rules/README.md, into chunks.
// Returns Unimplemented for a file whose layout it does not follow (a rule
// whose op names are not a scalar or a flow list, a top-level key other than
// version, rules and ignored, tabs): compile such a file whole instead. The
// chunks say nothing about validity: compiling them finds the errors.
Result<SplitFile> SplitRuleFile(std::string_view text);

// Returns the text of `file` with every line that is not the header, the
// ignored section (if `with_ignored`) or a rule of `chunk` blanked, so that a
// compile error in it has the line and column it has in the whole file. With
// `line_of`, the lines blanked are left out instead, and `line_of` gets the
// file's line (0-based) of each line returned (for ParseRuleFile).
std::string ChunkAsFile(std::string_view text, const SplitFile& file,
                        const RuleChunk* chunk, bool with_ignored,
                        std::vector<int>* line_of = nullptr);

}  // namespace torchcost::rules

#endif  // TORCHCOST_SRC_RULES_RULE_CHUNKS_H_
