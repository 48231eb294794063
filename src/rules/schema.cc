#include "rules/schema.h"

#include <cctype>
#include <cstdlib>

namespace torchcost::rules {
namespace {

// A hand-rolled scanner over the schema text: the grammar is small and fixed.
class SchemaParser {
 public:
  explicit SchemaParser(std::string_view text) : text_(text) {}

  Result<Schema> Parse() {
    Schema s;
    SkipSpace();
    std::string full = Ident();
    if (full.empty()) return Error("expected an operator name");
    size_t ns = full.rfind("::");
    if (ns != std::string::npos) full = full.substr(ns + 2);
    size_t dot = full.find('.');
    if (dot != std::string::npos) {
      s.overload = full.substr(dot + 1);
      full = full.substr(0, dot);
    }
    s.name = full;
    SkipSpace();
    if (!Eat('(')) return Error("expected '('");
    bool kwarg_only = false;
    SkipSpace();
    while (!Peek(')')) {
      SkipSpace();
      if (Eat('*')) {
        kwarg_only = true;
        SkipSpace();
        if (!Eat(',')) {
          SkipSpace();
          if (Peek(')')) break;
          return Error("expected ',' after '*'");
        }
        continue;
      }
      SchemaArg arg;
      TORCHCOST_RETURN_IF_ERROR(ParseArg(&arg, /*is_return=*/false));
      arg.kwarg_only = kwarg_only;
      s.args.push_back(std::move(arg));
      SkipSpace();
      if (Eat(',')) continue;
      if (!Peek(')')) return Error("expected ',' or ')'");
    }
    Eat(')');
    SkipSpace();
    if (pos_ >= text_.size()) return s;  // Returns are optional in rule files.
    if (!(Eat('-') && Eat('>'))) return Error("expected '->'");
    SkipSpace();
    if (Eat('(')) {
      SkipSpace();
      while (!Peek(')')) {
        SchemaArg ret;
        TORCHCOST_RETURN_IF_ERROR(ParseArg(&ret, /*is_return=*/true));
        s.returns.push_back(std::move(ret));
        SkipSpace();
        if (Eat(',')) {
          SkipSpace();
          continue;
        }
        if (!Peek(')')) return Error("expected ',' or ')' in returns");
      }
      Eat(')');
    } else {
      SchemaArg ret;
      TORCHCOST_RETURN_IF_ERROR(ParseArg(&ret, /*is_return=*/true));
      s.returns.push_back(std::move(ret));
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the returns");
    return s;
  }

 private:
  Status ParseArg(SchemaArg* arg, bool is_return) {
    SkipSpace();
    std::string type = Ident();
    if (type.empty()) return Error("expected a type");
    // Alias annotation: Tensor(a), Tensor(a!), Tensor(a -> *).
    if (Peek('(')) {
      int depth = 0;
      while (pos_ < text_.size()) {
        char c = text_[pos_++];
        if (c == '(') ++depth;
        if (c == ')' && --depth == 0) break;
      }
    }
    ArgType& t = arg->type;
    if (type == "Tensor")
      t.base = ArgType::Base::kTensor;
    else if (type == "int" || type == "SymInt")
      t.base = ArgType::Base::kInt;
    else if (type == "float")
      t.base = ArgType::Base::kFloat;
    else if (type == "bool")
      t.base = ArgType::Base::kBool;
    else if (type == "str")
      t.base = ArgType::Base::kString;
    else if (type == "Scalar")
      t.base = ArgType::Base::kScalar;
    else if (type == "ScalarType")
      t.base = ArgType::Base::kScalarType;
    else
      t.base = ArgType::Base::kOther;
    // Suffixes in any order TorchScript writes them: "[]", "[2]", "?", "(a)"
    // after list.
    for (;;) {
      if (Eat('[')) {
        t.is_list = true;
        std::string num;
        while (pos_ < text_.size() &&
               std::isdigit(static_cast<unsigned char>(text_[pos_])))
          num += text_[pos_++];
        if (!num.empty()) t.list_size = std::atoi(num.c_str());
        if (!Eat(']')) return Error("expected ']'");
      } else if (Eat('?')) {
        t.optional = true;
      } else if (Peek('(')) {
        int depth = 0;
        while (pos_ < text_.size()) {
          char c = text_[pos_++];
          if (c == '(') ++depth;
          if (c == ')' && --depth == 0) break;
        }
      } else {
        break;
      }
    }
    SkipSpace();
    arg->name = Ident();
    if (arg->name.empty() && !is_return)
      return Error("expected an argument name");
    SkipSpace();
    if (!is_return && Eat('=')) {
      SkipSpace();
      size_t start = pos_;
      int depth = 0;
      bool in_str = false;
      while (pos_ < text_.size()) {
        char c = text_[pos_];
        if (in_str) {
          if (c == '"') in_str = false;
        } else if (c == '"' || c == '\'') {
          in_str = true;
        } else if (c == '[' || c == '(') {
          ++depth;
        } else if (c == ']' || (c == ')' && depth > 0)) {
          --depth;
        } else if ((c == ',' || c == ')') && depth == 0) {
          break;
        }
        ++pos_;
      }
      arg->has_default = true;
      arg->default_value = ParseDefault(text_.substr(start, pos_ - start), t);
    }
    return Status::Ok();
  }

  static RValue ParseScalarLiteral(std::string_view v, const ArgType& t) {
    while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
    if (v == "None") return RValue::None();
    if (v == "True") return RValue::Bool(true);
    if (v == "False") return RValue::Bool(false);
    if (!v.empty() && (v.front() == '"' || v.front() == '\''))
      return RValue::Str(std::string(v.substr(1, v.size() - 2)));
    std::string s(v);
    char* end = nullptr;
    long long i = std::strtoll(s.c_str(), &end, 10);
    if (end && *end == '\0' && !s.empty()) {
      if (t.base == ArgType::Base::kFloat)
        return RValue::Float(static_cast<double>(i));
      return RValue::Int(sym::Expr(static_cast<int64_t>(i)));
    }
    double d = std::strtod(s.c_str(), &end);
    if (end && *end == '\0' && !s.empty()) return RValue::Float(d);
    return RValue::Str(s);  // contiguous_format, mean, ...
  }

  static RValue ParseDefault(std::string_view v, const ArgType& t) {
    if (!v.empty() && v.front() == '[') {
      sym::Shape ints;
      std::string_view inner = v.substr(1, v.size() - 2);
      size_t start = 0;
      while (start < inner.size()) {
        size_t comma = inner.find(',', start);
        std::string_view item = inner.substr(
            start, comma == std::string_view::npos ? std::string_view::npos
                                                   : comma - start);
        while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
        RValue r = ParseScalarLiteral(item, t);
        if (r.kind == RValue::Kind::kInt) ints.push_back(r.i);
        if (comma == std::string_view::npos) break;
        start = comma + 1;
      }
      return RValue::IntList(std::move(ints));
    }
    RValue r = ParseScalarLiteral(v, t);
    if (t.is_list && r.kind == RValue::Kind::kInt) {
      // "int[2] stride=1" means [1, 1].
      int n = t.list_size > 0 ? t.list_size : 1;
      return RValue::IntList(sym::Shape(n, r.i));
    }
    return r;
  }

  std::string Ident() {
    size_t start = pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ||
          (c == ':' && pos_ + 1 < text_.size() && text_[pos_ + 1] == ':') ||
          (c == ':' && pos_ > 0 && text_[pos_ - 1] == ':')) {
        ++pos_;
      } else {
        break;
      }
    }
    return std::string(text_.substr(start, pos_ - start));
  }
  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++pos_;
    return true;
  }
  Status Error(const std::string& what) const {
    return Status::ParseError("schema column " + std::to_string(pos_ + 1) +
                              ": " + what);
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

int Schema::FindArg(std::string_view n) const {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].name == n) return static_cast<int>(i);
  }
  return -1;
}

Result<Schema> ParseSchema(std::string_view text) {
  return SchemaParser(text).Parse();
}

}  // namespace torchcost::rules
