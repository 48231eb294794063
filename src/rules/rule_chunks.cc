#include "rules/rule_chunks.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace torchcost::rules {
namespace {

// Returns the offset of each line of `text` (as Lines splits it).
std::vector<uint32_t> LineStarts(std::string_view text) {
  std::vector<uint32_t> starts;
  size_t start = 0;
  while (start <= text.size()) {
    starts.push_back(static_cast<uint32_t>(start));
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    start = end + 1;
  }
  return starts;
}

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// Returns `line` without its comment: from a '#' at its start or after a
// space, outside quotes, to its end.
std::string_view StripComment(std::string_view line) {
  if (line.find('#') == std::string_view::npos) return line;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
    } else if (c == '"' || c == '\'') {
      quote = c;
    } else if (c == '#' && (i == 0 || line[i - 1] == ' ')) {
      return line.substr(0, i);
    }
  }
  return line;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

int Indent(std::string_view line) {
  int n = 0;
  while (n < static_cast<int>(line.size()) && line[n] == ' ') ++n;
  return n;
}

bool AnchorChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
         (c >= '0' && c <= '9') || c == '_' || c == '-';
}

// Adds to `anchors` the names after '&' and to `aliases` those after '*' where
// YAML would read them so (at a node's start, outside quotes). An expression
// such as `2 *N` counts as an alias too, which at worst joins two chunks.
void ScanAnchors(std::string_view line, std::vector<std::string>* anchors,
                 std::vector<std::string>* aliases) {
  if (line.find('&') == std::string_view::npos &&
      line.find('*') == std::string_view::npos)
    return;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote) quote = 0;
      continue;
    }
    if (c == '"' || c == '\'') {
      quote = c;
      continue;
    }
    if (c != '&' && c != '*') continue;
    const char before = i == 0 ? ' ' : line[i - 1];
    if (before != ' ' && before != '[' && before != '{' && before != ',')
      continue;
    size_t end = i + 1;
    while (end < line.size() && AnchorChar(line[end])) ++end;
    if (end == i + 1) continue;
    (c == '&' ? anchors : aliases)
        ->emplace_back(line.substr(i + 1, end - i - 1));
  }
}

// Reads the op names of `value` (a scalar or a flow list, quoted or not).
bool ParseOpNames(std::string_view value, std::vector<std::string>* ops) {
  value = Trim(value);
  if (value.empty() || value[0] == '&' || value[0] == '*' || value[0] == '{' ||
      value[0] == '|' || value[0] == '>') {
    return false;
  }
  auto unquote = [](std::string_view s) {
    s = Trim(s);
    if (s.size() >= 2 && (s.front() == '"' || s.front() == '\'') &&
        s.back() == s.front())
      s = s.substr(1, s.size() - 2);
    return std::string(s);
  };
  if (value[0] != '[') {
    ops->push_back(unquote(value));
    return true;
  }
  if (value.back() != ']') return false;
  value = value.substr(1, value.size() - 2);
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string name = unquote(value.substr(start, comma - start));
    if (!name.empty()) ops->push_back(std::move(name));
    start = comma + 1;
  }
  return true;
}

}  // namespace

Result<SplitFile> SplitRuleFile(std::string_view text) {
  const std::vector<std::string_view> lines = Lines(text);
  const int n = static_cast<int>(lines.size());
  SplitFile out;
  if (text.size() <= UINT32_MAX) {
    out.line_starts.reserve(lines.size());
    for (std::string_view l : lines)
      out.line_starts.push_back(static_cast<uint32_t>(l.data() - text.data()));
    out.text_size = text.size();
  }
  std::vector<RuleSpan> rules;
  enum class Section { kNone, kRules, kIgnored } section = Section::kNone;
  int item_indent = -1;
  bool ignored_plain = true;
  auto close_section = [&](int at) {
    if (!rules.empty() && rules.back().end_line == 0)
      rules.back().end_line = at;
    if (section == Section::kIgnored) out.ignored_end_line = at;
  };
  // Each line without its comment, trimmed.
  std::vector<std::string_view> content(n);
  for (int i = 0; i < n; ++i) {
    const std::string_view raw = lines[i];
    if (raw.find('\t') != std::string_view::npos)
      return Status::Unimplemented("a tab");
    content[i] = Trim(StripComment(raw));
    if (content[i].empty()) continue;
    const std::string_view line = content[i];
    const int indent = Indent(raw);
    if (indent == 0 && line[0] != '-') {
      close_section(i);
      const size_t colon = line.find(':');
      const std::string_view key =
          colon == std::string_view::npos ? line : line.substr(0, colon);
      const std::string_view rest =
          colon == std::string_view::npos ? "" : Trim(line.substr(colon + 1));
      if (key == "version") {
        out.version_line = i;
        section = Section::kNone;
      } else if (key == "rules" && rest.empty() && out.rules_line < 0) {
        out.rules_line = i;
        section = Section::kRules;
      } else if (key == "ignored" && rest.empty() &&
                 out.ignored_first_line < 0) {
        out.ignored_first_line = i;
        section = Section::kIgnored;
      } else {
        return Status::Unimplemented("top-level line '" + std::string(line) +
                                     "'");
      }
      continue;
    }
    if (section == Section::kNone)
      return Status::Unimplemented("a line outside the top-level keys");
    if (section == Section::kIgnored) {
      // "- name", a plain op name; anything else leaves the section to YAML.
      bool plain = line.size() > 2 && line[0] == '-' && line[1] == ' ';
      const std::string_view name =
          plain ? Trim(line.substr(2)) : std::string_view();
      for (char c : name)
        plain = plain && (AnchorChar(c) || c == ':' || c == '.');
      if (plain && !name.empty()) {
        out.ignored.emplace_back(name);
      } else {
        ignored_plain = false;
      }
      continue;
    }
    if (item_indent < 0) {
      if (line[0] != '-')
        return Status::Unimplemented("'rules' is not a block list");
      item_indent = indent;
    }
    if (indent < item_indent)
      return Status::Unimplemented("a line left of the rule list");
    if (indent == item_indent) {
      if (line[0] != '-' || (line.size() > 1 && line[1] != ' ')) {
        return Status::Unimplemented(
            "a line at the rule list's indent that starts no rule");
      }
      if (!rules.empty()) rules.back().end_line = i;
      RuleSpan span;
      span.first_line = i;
      rules.push_back(std::move(span));
    }
  }
  close_section(n);
  out.ignored_read = out.ignored_first_line >= 0 && ignored_plain;
  if (!out.ignored_read) out.ignored.clear();

  // Op names: the `op:` key at the rule's key column (after "- " on its first
  // line).
  for (RuleSpan& r : rules) {
    const std::string_view first = lines[r.first_line];
    const int dash = Indent(first);
    const int key_col = dash + 1 + Indent(first.substr(dash + 1));
    for (int i = r.first_line; i < r.end_line && r.ops.empty(); ++i) {
      std::string_view line = StripComment(lines[i]);
      if (i != r.first_line && Indent(line) != key_col) continue;
      if (static_cast<int>(line.size()) <= key_col) continue;
      line = line.substr(key_col);
      if (line.substr(0, 3) != "op:") continue;
      std::string value(Trim(line.substr(3)));
      // A flow list may continue on the following lines.
      for (int j = i + 1;
           !value.empty() && value[0] == '[' && value.back() != ']'; ++j) {
        if (j >= r.end_line)
          return Status::Unimplemented("an unclosed op list");
        value += " ";
        value += Trim(StripComment(lines[j]));
      }
      if (!ParseOpNames(value, &r.ops))
        return Status::Unimplemented(
            "op names that are not a scalar or a flow list");
      if (r.ops.empty()) return Status::Unimplemented("an empty op list");
    }
    if (r.ops.empty()) return Status::Unimplemented("a rule without 'op'");
  }

  // Each rule compiles with the rules whose anchors it uses. NB: an alias
  // names the latest anchor of that name before it, as YAML reads it.
  const int m = static_cast<int>(rules.size());
  // Earlier rules, transitively; sorted.
  std::vector<std::vector<int>> needs(m);
  std::map<std::string, int, std::less<>> anchor_rule;
  std::vector<std::string> anchors, aliases;
  for (int r = 0; r < m; ++r) {
    anchors.clear();
    aliases.clear();
    for (int i = rules[r].first_line; i < rules[r].end_line; ++i)
      ScanAnchors(content[i], &anchors, &aliases);
    std::vector<int>& need = needs[r];
    for (const std::string& a : aliases) {
      auto it = anchor_rule.find(a);
      if (it == anchor_rule.end() ||
          std::find(anchors.begin(), anchors.end(), a) != anchors.end())
        continue;
      need.push_back(it->second);
      need.insert(need.end(), needs[it->second].begin(),
                  needs[it->second].end());
    }
    std::sort(need.begin(), need.end());
    need.erase(std::unique(need.begin(), need.end()), need.end());
    for (const std::string& a : anchors) anchor_rule[a] = r;
  }
  out.chunks.resize(m);
  for (int r = 0; r < m; ++r) {
    for (int d : needs[r]) out.chunks[r].rules.push_back(rules[d]);
    out.chunks[r].rules.push_back(rules[r]);
  }
  return out;
}

std::string ChunkAsFile(std::string_view text, const SplitFile& file,
                        const RuleChunk* chunk, bool with_ignored,
                        std::vector<int>* line_of) {
  // NB: the lines are found from the split's offsets where it has them for
  // this text: splitting a whole built-in file per chunk was a third of a
  // chunk's compile.
  std::vector<uint32_t> own_starts;
  const bool split_starts = !file.line_starts.empty() &&
                            file.text_size == text.size() &&
                            text.size() <= UINT32_MAX;
  if (!split_starts) own_starts = LineStarts(text);
  const std::vector<uint32_t>& starts =
      split_starts ? file.line_starts : own_starts;
  const size_t num_lines = starts.size();
  auto line = [&](size_t i) {
    // Line i ends at the newline before line i + 1, or at the text's end.
    const size_t end = i + 1 < num_lines ? starts[i + 1] - 1 : text.size();
    return text.substr(starts[i], end - starts[i]);
  };
  // The kept lines' ranges, then the lines, ascending and each once.
  std::vector<std::pair<int, int>> ranges;
  auto keep_range = [&](int first, int end) {
    first = std::max(first, 0);
    end = std::min(end, static_cast<int>(num_lines));
    if (first < end) ranges.emplace_back(first, end);
  };
  keep_range(file.version_line, file.version_line + 1);
  if (chunk != nullptr) {
    keep_range(file.rules_line, file.rules_line + 1);
    for (const RuleSpan& r : chunk->rules) keep_range(r.first_line, r.end_line);
  }
  if (with_ignored) keep_range(file.ignored_first_line, file.ignored_end_line);
  std::sort(ranges.begin(), ranges.end());
  std::vector<size_t> kept;
  for (const auto& [first, end] : ranges) {
    // Sorted by first line: only lines past the last kept one are new.
    size_t i = static_cast<size_t>(first);
    if (!kept.empty()) i = std::max(i, kept.back() + 1);
    for (; i < static_cast<size_t>(end); ++i) kept.push_back(i);
  }
  // NB: comments are dropped too (the YAML reader spends a third of its time
  // on the derivations in them), unless a kept line opens a block scalar or
  // leaves a quote open, where '#' may be text.
  bool strip = true;
  for (size_t i : kept) {
    if (!strip) break;
    const std::string_view content = Trim(StripComment(line(i)));
    if (!content.empty() &&
        (content.back() == '|' || content.back() == '>' ||
         content.back() == '-' || content.back() == '+' ||
         (content.back() >= '0' && content.back() <= '9'))) {
      const size_t indicator = content.find_last_of("|>");
      if (indicator != std::string_view::npos &&
          content.find_first_not_of("|>-+0123456789", indicator) ==
              std::string_view::npos) {
        strip = false;
      }
    }
    char quote = 0;
    for (char c : content) {
      if (quote) {
        if (c == quote) quote = 0;
      } else if (c == '"' || c == '\'') {
        quote = c;
      }
    }
    if (quote) strip = false;
  }
  std::string out;
  if (line_of != nullptr) {
    // NB: yaml-cpp scans each blank line too: a rule of a long file parses
    // ~15% faster alone. Only the kept lines are visited.
    line_of->clear();
    line_of->reserve(kept.size());
    size_t bytes = 0;
    for (size_t i : kept) bytes += line(i).size() + 1;
    out.reserve(bytes);
    for (size_t i : kept) {
      line_of->push_back(static_cast<int>(i));
      out.append(strip ? StripComment(line(i)) : line(i));
      out.push_back('\n');
    }
    return out;
  }
  out.reserve(text.size());
  size_t next = 0;  // Index in `kept` of the next kept line.
  for (size_t i = 0; i < num_lines; ++i) {
    if (next < kept.size() && kept[next] == i) {
      ++next;
      out.append(strip ? StripComment(line(i)) : line(i));
    }
    if (i + 1 < num_lines) out.push_back('\n');
  }
  return out;
}

}  // namespace torchcost::rules
