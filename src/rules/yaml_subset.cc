#include "rules/yaml_subset.h"

#include <cctype>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace torchcost::rules {
namespace {

// Thrown when the text leaves the subset; the message names the construct.
struct OutsideSubset {
  std::string what;
  int line, column;
};

bool IsNullScalar(std::string_view s) {
  return s == "~" || s == "null" || s == "Null" || s == "NULL";
}

class SubsetParser {
 public:
  explicit SubsetParser(std::string_view text) {
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      lines_.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }

  YamlDocument Parse() {
    for (size_t i = 0; i < lines_.size(); ++i) {
      for (size_t c = 0; c < lines_[i].size(); ++c) {
        // NB: printable ASCII only: a tab can be indentation, which the subset
        // does not measure, and yaml-cpp decodes other bytes (UTF-8, UTF-16,
        // BOMs) its own way.
        const unsigned char b = static_cast<unsigned char>(lines_[i][c]);
        if (b < 0x20 || b >= 0x7f)
          Outside("a byte that is not printable ASCII", i, c);
      }
    }
    SkipBlank();
    if (li_ >= lines_.size()) Outside("an empty document", 0, 0);
    const std::string_view first = lines_[li_].substr(Indent(li_));
    if (first.rfind("---", 0) == 0 || first.rfind("...", 0) == 0 ||
        first[0] == '%') {
      Outside("a document marker or directive", li_, Indent(li_));
    }
    YamlNode root = ParseBlockBelow(-1, false);
    if (!root)
      Outside("a document that is not a block map or sequence", li_,
              Indent(li_));
    SkipBlank();
    if (li_ < lines_.size())
      Outside("content after the document's root", li_, Indent(li_));
    doc_.set_root(root);
    return std::move(doc_);
  }

 private:
  [[noreturn]] static void Outside(const std::string& what, size_t line,
                                   size_t column) {
    throw OutsideSubset{what, static_cast<int>(line), static_cast<int>(column)};
  }

  size_t Indent(size_t line) const {
    const std::string_view l = lines_[line];
    size_t i = 0;
    while (i < l.size() && l[i] == ' ') ++i;
    return i;
  }
  bool Blank(size_t line) const {
    const size_t i = Indent(line);
    return i == lines_[line].size() || lines_[line][i] == '#';
  }
  void SkipBlank() {
    while (li_ < lines_.size() && Blank(li_)) ++li_;
  }

  // `- ` (or a lone `-`) at `col` of the current line.
  bool IsSeqEntry(size_t col) const {
    const std::string_view l = lines_[li_];
    return col < l.size() && l[col] == '-' &&
           (col + 1 == l.size() || l[col + 1] == ' ');
  }
  // The column of the `:` ending a plain key that starts at `col`; npos if
  // none.
  size_t KeyColon(size_t col) const {
    const std::string_view l = lines_[li_];
    if (col >= l.size()) return std::string_view::npos;
    // NB: the subset's keys are names: letters, digits, '_', '.' and '-' (not
    // first).
    if (l[col] == '-') return std::string_view::npos;
    for (size_t i = col; i < l.size(); ++i) {
      const char c = l[i];
      if (c == ':' && i > col && (i + 1 == l.size() || l[i + 1] == ' '))
        return i;
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' &&
          c != '.' && c != '-')
        break;
    }
    return std::string_view::npos;
  }

  YamlNode::Data* New(YamlNode::Kind kind, size_t line, size_t col) {
    return doc_.NewNode(
        kind, YamlMark{static_cast<int>(line), static_cast<int>(col)});
  }

  // The block node on the lines after the current one, indented more than
  // `parent` (or as much, if a sequence and `seq_at_parent`); undefined if
  // none.
  YamlNode ParseBlockBelow(long parent, bool seq_at_parent) {
    SkipBlank();
    if (li_ >= lines_.size()) return YamlNode();
    const size_t ind = Indent(li_);
    if (static_cast<long>(ind) < parent) return YamlNode();
    if (static_cast<long>(ind) == parent && !(seq_at_parent && IsSeqEntry(ind)))
      return YamlNode();
    if (IsSeqEntry(ind)) return ParseBlockSeq(ind);
    if (KeyColon(ind) != std::string_view::npos) return ParseBlockMap(ind);
    Outside("a value on a line of its own", li_, ind);
  }

  // After a block node's entry: a deeper line would continue its scalar.
  void CheckNoContinuation(size_t ind) {
    SkipBlank();
    if (li_ < lines_.size() && Indent(li_) > ind)
      Outside("a multi-line scalar or an over-indented line", li_, Indent(li_));
  }

  YamlNode ParseBlockSeq(size_t ind) {
    YamlNode::Data* seq = New(YamlNode::Kind::kSequence, li_, ind);
    while (true) {
      SkipBlank();
      if (li_ >= lines_.size() || Indent(li_) != ind || !IsSeqEntry(ind)) break;
      size_t col = ind + 1;
      const std::string_view l = lines_[li_];
      while (col < l.size() && l[col] == ' ') ++col;
      if (col == l.size() || l[col] == '#') {
        ++li_;
        YamlNode item = ParseBlockBelow(static_cast<long>(ind), false);
        if (!item) Outside("an empty sequence item", li_, ind);
        seq->items.emplace_back(item);
        continue;
      }
      if (IsSeqEntry(col)) Outside("a nested compact sequence", li_, col);
      if (KeyColon(col) != std::string_view::npos) {
        seq->items.emplace_back(ParseBlockMap(col));
        continue;
      }
      seq->items.emplace_back(ParseLineValue(col));
      CheckNoContinuation(ind);
    }
    if (li_ < lines_.size() && Indent(li_) > ind)
      Outside("an over-indented line", li_, Indent(li_));
    return YamlNode(seq);
  }

  // A block map whose first key is at `col` of the current line (after a
  // sequence entry's dash, or its indent) and whose other keys are at that
  // column on later lines.
  YamlNode ParseBlockMap(size_t col) {
    YamlNode::Data* map = New(YamlNode::Kind::kMap, li_, col);
    bool first = true;
    while (true) {
      if (!first) {
        SkipBlank();
        if (li_ >= lines_.size() || Indent(li_) != col) break;
      }
      first = false;
      const size_t colon = KeyColon(col);
      if (colon == std::string_view::npos) {
        if (IsSeqEntry(col))
          Outside("a sequence entry among map keys", li_, col);
        Outside("a map key that is not a plain scalar", li_, col);
      }
      const std::string_view l = lines_[li_];
      const size_t li_of_key = li_;
      size_t key_end = colon;
      while (key_end > col && l[key_end - 1] == ' ') --key_end;
      const std::string_view key_text = l.substr(col, key_end - col);
      if (IsNullScalar(key_text)) Outside("a null key", li_, col);
      YamlNode::Data* key = New(YamlNode::Kind::kScalar, li_, col);
      key->scalar.assign(key_text);
      size_t v = colon + 1;
      while (v < l.size() && l[v] == ' ') ++v;
      std::string anchor;
      const size_t anchor_at = v;
      if (v < l.size() && l[v] == '&') {
        v = ReadAnchor(v, &anchor);
      }
      YamlNode value;
      if (v == l.size() || l[v] == '#') {
        ++li_;
        value = ParseBlockBelow(static_cast<long>(col), true);
        if (!value) Outside("a key with no value", li_ - 1, col);
      } else {
        value = ParseLineValue(v);
        CheckNoContinuation(col);
      }
      if (!anchor.empty()) Anchor(anchor, value, li_of_key, anchor_at);
      map->items.emplace_back(YamlNode(key), value);
    }
    if (li_ < lines_.size() && Indent(li_) > col)
      Outside("an over-indented line", li_, Indent(li_));
    return YamlNode(map);
  }

  // Records `node` as the anchor `name` written at (`line`, `column`).
  void Anchor(const std::string& name, YamlNode node, size_t line,
              size_t column) {
    // NB: yaml-cpp marks an anchored node where its anchor is, not where its
    // content starts.
    auto* d = const_cast<YamlNode::Data*>(node.data());  // Ours: made by New.
    d->mark = YamlMark{static_cast<int>(line), static_cast<int>(column)};
    anchors_[name] = d;
  }

  // The end of the anchor or alias name after the indicator at `at`: letters,
  // digits, '_' and '-', then a space, the line's end or a flow indicator.
  size_t NameEnd(size_t at) const {
    const std::string_view l = lines_[li_];
    size_t e = at + 1;
    while (e < l.size() && (std::isalnum(static_cast<unsigned char>(l[e])) ||
                            l[e] == '_' || l[e] == '-'))
      ++e;
    if (e == at + 1) Outside("an empty anchor or alias name", li_, at);
    if (e < l.size() && l[e] != ' ' && l[e] != ',' && l[e] != ']' &&
        l[e] != '}') {
      Outside("an anchor or alias name with other characters", li_, e);
    }
    return e;
  }

  // Reads `&name` at `at`; returns the column after it and its spaces.
  size_t ReadAnchor(size_t at, std::string* name) {
    const std::string_view l = lines_[li_];
    size_t e = NameEnd(at);
    name->assign(l.substr(at + 1, e - at - 1));
    while (e < l.size() && l[e] == ' ') ++e;
    if (e < l.size() && (l[e] == '&' || l[e] == '*'))
      Outside("an anchor on an anchor or an alias", li_, e);
    return e;
  }

  // A value that ends on this line (scalar, flow collection, alias), then
  // nothing but a comment; moves to the next line.
  YamlNode ParseLineValue(size_t col) {
    size_t pos = col;
    YamlNode n = ParseInline(&pos, false);
    const std::string_view l = lines_[li_];
    while (pos < l.size() && l[pos] == ' ') ++pos;
    if (pos < l.size() && !(l[pos] == '#' && l[pos - 1] == ' '))
      Outside("text after a value", li_, pos);
    ++li_;
    return n;
  }

  // The node at `*pos`, in flow context (inside [] or {}) or not; advances
  // `*pos`.
  YamlNode ParseInline(size_t* pos, bool flow) {
    const std::string_view l = lines_[li_];
    size_t p = *pos;
    if (p >= l.size()) Outside("a missing value", li_, p);
    const char c = l[p];
    if (c == '&') {
      std::string anchor;
      const size_t line = li_;
      *pos = ReadAnchor(p, &anchor);
      if (*pos >= l.size() || l[*pos] == '#' ||
          KeyColon(*pos) != std::string_view::npos) {
        Outside("an anchor on an empty value or a compact map", li_, p);
      }
      YamlNode n = ParseInline(pos, flow);
      Anchor(anchor, n, line, p);
      return n;
    }
    if (c == '*') {
      const size_t e = NameEnd(p);
      auto it = anchors_.find(std::string(l.substr(p + 1, e - p - 1)));
      if (it == anchors_.end())
        Outside("an alias of an unknown anchor", li_, p);
      *pos = e;
      return YamlNode(it->second);
    }
    if (c == '[' || c == '{') return ParseFlow(pos);
    if (c == '"' || c == '\'') return ParseQuoted(pos);
    if (std::string_view("]},!|>%@`#").find(c) != std::string_view::npos)
      Outside("an indicator", li_, p);
    if (c == '?' || c == ':' ||
        (c == '-' && (p + 1 == l.size() || l[p + 1] == ' ')))
      Outside("an indicator", li_, p);
    // A plain scalar: to the end of the line or a comment (block), or to a flow
    // indicator (flow).
    size_t e = p;
    while (e < l.size()) {
      const char d = l[e];
      if (d == '#' && l[e - 1] == ' ') break;
      if (d == ':' &&
          (e + 1 == l.size() || l[e + 1] == ' ' ||
           (flow && (l[e + 1] == ',' || l[e + 1] == ']' || l[e + 1] == '}')))) {
        if (!flow) Outside("': ' in a plain scalar", li_, e);
        break;
      }
      // NB: yaml-cpp ends a plain scalar in a flow collection at any '?' too.
      if (d == '?' && flow)
        Outside("'?' inside a plain scalar in a flow collection", li_, e);
      if (flow && (d == ',' || d == ']' || d == '}' || d == '[' || d == '{'))
        break;
      ++e;
    }
    size_t t = e;
    while (t > p && l[t - 1] == ' ') --t;
    const std::string_view text = l.substr(p, t - p);
    if (IsNullScalar(text)) Outside("a null scalar", li_, p);
    YamlNode::Data* s = New(YamlNode::Kind::kScalar, li_, p);
    s->scalar.assign(text);
    *pos = e;
    return YamlNode(s);
  }

  YamlNode ParseQuoted(size_t* pos) {
    const std::string_view l = lines_[li_];
    const size_t p = *pos;
    const char q = l[p];
    YamlNode::Data* s = New(YamlNode::Kind::kScalar, li_, p);
    s->quoted = true;
    size_t i = p + 1;
    while (true) {
      if (i >= l.size())
        Outside("a quoted scalar that goes on to the next line", li_, p);
      const char c = l[i];
      if (q == '\'' && c == '\'') {
        if (i + 1 < l.size() && l[i + 1] == '\'') {
          s->scalar.push_back('\'');
          i += 2;
          continue;
        }
        break;
      }
      if (q == '"' && c == '"') break;
      if (q == '"' && c == '\\') {
        if (i + 1 < l.size() && (l[i + 1] == '"' || l[i + 1] == '\\')) {
          s->scalar.push_back(l[i + 1]);
          i += 2;
          continue;
        }
        Outside("an escape other than \\\" or \\\\", li_, i);
      }
      s->scalar.push_back(c);
      ++i;
    }
    *pos = i + 1;
    return YamlNode(s);
  }

  // A flow sequence or map; it may go on over lines indented more than the one
  // it starts on.
  YamlNode ParseFlow(size_t* pos) {
    const size_t first_line = li_;
    const size_t p = *pos;
    const bool is_map = lines_[li_][p] == '{';
    const char close = is_map ? '}' : ']';
    YamlNode::Data* n =
        New(is_map ? YamlNode::Kind::kMap : YamlNode::Kind::kSequence, li_, p);
    size_t i = p + 1;
    // Moves to the next token: past spaces, comments and line ends.
    auto skip = [&] {
      while (true) {
        const std::string_view l = lines_[li_];
        while (i < l.size() && l[i] == ' ') ++i;
        if (i < l.size() && !(l[i] == '#' && l[i - 1] == ' ')) return;
        ++li_;
        SkipBlank();
        if (li_ >= lines_.size() || Indent(li_) <= Indent(first_line)) {
          Outside(
              "a flow collection that is not closed, or goes on to a line not "
              "indented more",
              first_line, p);
        }
        i = Indent(li_);
      }
    };
    auto at = [&] { return lines_[li_][i]; };
    skip();
    if (at() == close) {
      *pos = i + 1;
      return YamlNode(n);
    }
    while (true) {
      skip();
      YamlNode item = ParseInline(&i, true);
      skip();
      if (is_map) {
        if (at() != ':' || !item.IsScalar() || item.data()->quoted)
          Outside("a flow map entry that is not key: value", li_, i);
        ++i;
        skip();
        YamlNode value = ParseInline(&i, true);
        n->items.emplace_back(item, value);
        skip();
      } else {
        if (at() == ':')
          Outside("a single-pair map in a flow sequence", li_, i);
        n->items.emplace_back(item);
      }
      if (at() == close) break;
      if (at() != ',') Outside("a flow collection's separator", li_, i);
      ++i;
      skip();
      if (at() == close) Outside("a trailing comma", li_, i);
    }
    *pos = i + 1;
    return YamlNode(n);
  }

  std::vector<std::string_view> lines_;
  size_t li_ = 0;
  YamlDocument doc_;
  std::unordered_map<std::string, const YamlNode::Data*> anchors_;
};

}  // namespace

Result<YamlDocument> ParseYamlSubset(std::string_view text) {
  try {
    return SubsetParser(text).Parse();
  } catch (const OutsideSubset& o) {
    return Status::Unimplemented(std::to_string(o.line + 1) + ":" +
                                 std::to_string(o.column + 1) + ": " + o.what +
                                 " is outside the YAML subset");
  }
}

}  // namespace torchcost::rules
