// The fast path of the JSON graph frontend: the "nodes" array found and its
// nodes read straight from the text (graph_json_scan.h).
#include "import/graph_json_scan.h"

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "torchcost/dtype.h"
#include "torchcost/graph.h"
#include "torchcost/status.h"

namespace torchcost::import {
namespace {

using Json = nlohmann::ordered_json;

}  // namespace

bool ParseKind(const std::string& type, ir::ValueKind* kind,
               ir::ValueKind* elem) {
  static const auto* kKinds =
      new std::unordered_map<std::string, ir::ValueKind>{
          {"Tensor", ir::ValueKind::kTensor},
          {"int", ir::ValueKind::kInt},
          {"SymInt", ir::ValueKind::kInt},
          {"float", ir::ValueKind::kFloat},
          {"bool", ir::ValueKind::kBool},
          {"str", ir::ValueKind::kString},
          {"None", ir::ValueKind::kNone},
          {"Device", ir::ValueKind::kDevice},
          {"other", ir::ValueKind::kOther}};
  std::string base = type;
  const bool is_list =
      base.size() > 2 && base.compare(base.size() - 2, 2, "[]") == 0;
  if (is_list) base.resize(base.size() - 2);
  // Optional[T] is read as T.
  if (!base.empty() && base.back() == '?') base.pop_back();
  auto it = kKinds->find(base);
  if (it == kKinds->end()) return false;
  *kind = is_list ? ir::ValueKind::kList : it->second;
  *elem = is_list ? it->second : ir::ValueKind::kOther;
  return true;
}

bool FindNodesArray(std::string_view text, size_t* begin, size_t* end,
                    size_t* count) {
  auto skip_space = [&](size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n' ||
                               text[i] == '\r' || text[i] == '\t'))
      ++i;
    return i;
  };
  size_t i = skip_space(0);
  if (i >= text.size() || text[i] != '{') return false;
  int depth = 0, found = 0;
  size_t nodes_begin = std::string_view::npos;
  for (; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const size_t start = ++i;
      bool escaped = false;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\') {
          escaped = true;
          ++i;
        }
        ++i;
      }
      if (i >= text.size()) return false;
      if (depth != 1) continue;
      const size_t after = skip_space(i + 1);
      // A value, not a key.
      if (after >= text.size() || text[after] != ':') continue;
      // A key the parser would decode: read the whole document.
      if (escaped) return false;
      if (text.substr(start, i - start) != "nodes") continue;
      const size_t value = skip_space(after + 1);
      if (value >= text.size() || text[value] != '[' || ++found > 1)
        return false;
      nodes_begin = value;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == ',') {
      if (depth == 2 && nodes_begin != std::string_view::npos &&
          *end == std::string_view::npos)
        ++*count;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return false;
      if (depth == 1 && nodes_begin != std::string_view::npos &&
          *end == std::string_view::npos)
        *end = i + 1;
      if (depth == 0) break;
    }
  }
  if (found != 1 || *end == std::string_view::npos) return false;
  *begin = nodes_begin;
  return true;
}

Json SimpleArg::ToJson() const {
  switch (kind) {
    case Kind::kNull:
      return Json(nullptr);
    case Kind::kBool:
      return Json(b);
    case Kind::kInt:
      return Json(i);
    case Kind::kString:
      return Json(std::string(text));
    case Kind::kRef:
    case Kind::kParam:
    case Kind::kBuffer:
    case Kind::kInput:
      break;
  }
  const char* key = kind == Kind::kRef      ? "ref"
                    : kind == Kind::kParam  ? "param"
                    : kind == Kind::kBuffer ? "buffer"
                                            : "input";
  Json object = Json::object();
  object[key] = target_is_int ? Json(i) : Json(std::string(text));
  return object;
}

bool SimpleScanner::AtEnd() {
  SkipSpace();
  return pos_ >= text_.size();
}

bool SimpleScanner::Eat(char c) {
  SkipSpace();
  if (pos_ < text_.size() && text_[pos_] == c) {
    ++pos_;
    return true;
  }
  return false;
}

bool SimpleScanner::ParseNode(SimpleNode* n) {
  n->has_op = n->has_overload = n->has_module = n->has_args = n->has_outputs =
      false;
  n->args.clear();
  n->outputs.clear();
  if (!Eat('{')) return false;
  if (Eat('}')) return true;
  bool seen_overload = false, seen_module = false;
  do {
    std::string_view key;
    if (!ParseString(&key) || !Eat(':')) return false;
    if (key == "op") {
      if (n->has_op || !ParseString(&n->op)) return false;
      n->has_op = true;
    } else if (key == "overload" || key == "module") {
      const bool is_module = key == "module";
      bool& seen = is_module ? seen_module : seen_overload;
      if (seen) return false;
      seen = true;
      // A null is as if the key were absent.
      if (!ParseLiteral("null")) {
        if (!ParseString(is_module ? &n->module : &n->overload)) return false;
        (is_module ? n->has_module : n->has_overload) = true;
      }
    } else if (key == "args") {
      if (n->has_args || !ParseArgs(&n->args)) return false;
      n->has_args = true;
    } else if (key == "outputs") {
      if (n->has_outputs || !ParseOutputs(&n->outputs)) return false;
      n->has_outputs = true;
    } else {
      return false;
    }
  } while (Eat(','));
  return Eat('}');
}

bool SimpleScanner::SkipValue() {
  SkipSpace();
  int depth = 0;
  while (pos_ < text_.size()) {
    const char c = text_[pos_++];
    if (c == '"') {
      while (pos_ < text_.size() && text_[pos_] != '"')
        pos_ += text_[pos_] == '\\' ? 2 : 1;
      if (pos_ >= text_.size()) return false;
      ++pos_;
    } else if (c == '{' || c == '[') {
      ++depth;
    } else if (c == '}' || c == ']') {
      if (--depth < 0) return false;
    }
    if (depth == 0) {
      // A scalar runs to the next separator.
      if (c != '}' && c != ']' && c != '"') {
        while (pos_ < text_.size() &&
               std::string_view(",]} \n\r\t").find(text_[pos_]) ==
                   std::string_view::npos) {
          ++pos_;
        }
      }
      return true;
    }
  }
  return false;
}

void SimpleScanner::SkipSpace() {
  while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                 text_[pos_] == '\r' || text_[pos_] == '\t')) {
    ++pos_;
  }
}

bool SimpleScanner::ParseString(std::string_view* out) {
  if (!Eat('"')) return false;
  const size_t start = pos_;
  while (pos_ < text_.size()) {
    const unsigned char c = static_cast<unsigned char>(text_[pos_]);
    if (c == '"') {
      *out = text_.substr(start, pos_ - start);
      ++pos_;
      return true;
    }
    if (c == '\\' || c < 0x20 || c >= 0x80) return false;
    ++pos_;
  }
  return false;
}

bool SimpleScanner::ParseLiteral(std::string_view word) {
  SkipSpace();
  if (text_.substr(pos_, word.size()) != word) return false;
  const size_t after = pos_ + word.size();
  if (after < text_.size() &&
      std::isalnum(static_cast<unsigned char>(text_[after])))
    return false;
  pos_ = after;
  return true;
}

bool SimpleScanner::ParseInt(int64_t* out) {
  SkipSpace();
  size_t p = pos_;
  const bool negative = p < text_.size() && text_[p] == '-';
  if (negative) ++p;
  const size_t digits = p;
  int64_t value = 0;
  // NB: digits past the 18th are skipped, not accumulated: 19 of them can
  // overflow int64, and such a number is refused below anyway.
  while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9') {
    if (p - digits < 18) value = value * 10 + (text_[p] - '0');
    ++p;
  }
  const size_t n = p - digits;
  if (n == 0 || n > 18 || (n > 1 && text_[digits] == '0')) return false;
  if (p < text_.size() &&
      (text_[p] == '.' || text_[p] == 'e' || text_[p] == 'E'))
    return false;
  *out = negative ? -value : value;
  pos_ = p;
  return true;
}

bool SimpleScanner::StartsWith(char c) {
  SkipSpace();
  return pos_ < text_.size() && text_[pos_] == c;
}

bool SimpleScanner::ParseArg(SimpleArg* a) {
  if (StartsWith('"')) {
    a->kind = SimpleArg::Kind::kString;
    return ParseString(&a->text);
  }
  if (StartsWith('{')) {
    std::string_view key;
    if (!Eat('{') || !ParseString(&key) || !Eat(':')) return false;
    if (key == "ref") {
      a->kind = SimpleArg::Kind::kRef;
    } else if (key == "param") {
      a->kind = SimpleArg::Kind::kParam;
    } else if (key == "buffer") {
      a->kind = SimpleArg::Kind::kBuffer;
    } else if (key == "input") {
      a->kind = SimpleArg::Kind::kInput;
    } else {
      return false;
    }
    a->target_is_int = !StartsWith('"');
    if (a->target_is_int ? !ParseInt(&a->i) : !ParseString(&a->text))
      return false;
    return Eat('}');
  }
  if (ParseLiteral("null")) {
    a->kind = SimpleArg::Kind::kNull;
    return true;
  }
  if (ParseLiteral("true")) {
    a->kind = SimpleArg::Kind::kBool;
    a->b = true;
    return true;
  }
  if (ParseLiteral("false")) {
    a->kind = SimpleArg::Kind::kBool;
    a->b = false;
    return true;
  }
  a->kind = SimpleArg::Kind::kInt;
  return ParseInt(&a->i);
}

bool SimpleScanner::ParseArgs(std::vector<SimpleArg>* args) {
  if (!Eat('{')) return false;
  if (Eat('}')) return true;
  do {
    SimpleArg a;
    if (!ParseString(&a.name) || !Eat(':') || !ParseArg(&a)) return false;
    for (const SimpleArg& b : *args) {
      if (b.name == a.name) return false;
    }
    args->push_back(a);
  } while (Eat(','));
  return Eat('}');
}

bool SimpleScanner::ParseOutputs(std::vector<ir::Value>* outputs) {
  if (!Eat('[')) return false;
  if (Eat(']')) return true;
  do {
    ir::Value& v = outputs->emplace_back();
    v.kind = ir::ValueKind::kTensor;
    std::string_view name;
    if (StartsWith('"')) {
      if (!ParseString(&name)) return false;
      v.name.assign(name);
    } else if (!ParseOutputObject(&v)) {
      return false;
    }
  } while (Eat(','));
  return Eat(']');
}

bool SimpleScanner::ParseOutputObject(ir::Value* v) {
  if (!Eat('{')) return false;
  bool seen_name = false, seen_type = false, seen_shape = false,
       seen_dtype = false;
  std::vector<int64_t> shape;
  bool has_shape = false;
  if (!Eat('}')) {
    do {
      std::string_view key, text;
      if (!ParseString(&key) || !Eat(':')) return false;
      if (key == "name" && !seen_name) {
        seen_name = true;
        if (!ParseString(&text)) return false;
        v->name.assign(text);
      } else if (key == "type" && !seen_type) {
        seen_type = true;
        if (!ParseString(&text) ||
            !ParseKind(std::string(text), &v->kind, &v->elem_kind))
          return false;
      } else if (key == "shape" && !seen_shape) {
        seen_shape = true;
        if (ParseLiteral("null")) continue;
        has_shape = true;
        if (!Eat('[')) return false;
        if (!Eat(']')) {
          do {
            int64_t d = 0;
            if (!ParseInt(&d) || d < 0) return false;
            shape.push_back(d);
          } while (Eat(','));
          if (!Eat(']')) return false;
        }
      } else if (key == "dtype" && !seen_dtype) {
        seen_dtype = true;
        if (ParseLiteral("null")) continue;
        if (!ParseString(&text)) return false;
        Result<DType> d = ParseDType(std::string(text));
        if (!d.ok()) return false;
        v->dtype = *d;
      } else {
        return false;
      }
    } while (Eat(','));
    if (!Eat('}')) return false;
  }
  if (!seen_name) return false;
  if (has_shape) {
    v->traced_shape = std::move(shape);
    v->has_traced_shape = v->kind == ir::ValueKind::kTensor;
  }
  return true;
}

}  // namespace torchcost::import
