#include "import/ts_source.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>

namespace torchcost::import::ts {
namespace {

struct Token {
  enum class Kind { kName, kNumber, kString, kOp };
  Kind kind = Kind::kOp;
  std::string text;
};

// One logical line: its indentation and tokens.
struct Line {
  int indent = 0;
  int number = 0;  // 1-based, of its first physical line.
  std::vector<Token> tokens;
};

Status LineError(int line, const std::string& what) {
  return Status::InvalidArgument("line " + std::to_string(line) + ": " + what);
}

// Splits `text` into logical lines (brackets join physical lines).
Result<std::vector<Line>> Tokenize(std::string_view text) {
  std::vector<Line> lines;
  Line cur;
  int depth = 0;
  int number = 1;
  bool at_start = true;
  int indent = 0;
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (at_start) {
      if (c == ' ') {
        ++indent;
        ++i;
        continue;
      }
      if (c == '\t') return LineError(number, "tab in indentation");
      at_start = false;
      cur.indent = indent;
      cur.number = number;
    }
    if (c == '\n') {
      ++number;
      ++i;
      if (depth == 0) {
        if (!cur.tokens.empty()) lines.push_back(std::move(cur));
        cur = Line();
        at_start = true;
        indent = 0;
      }
      continue;
    }
    if (c == ' ' || c == '\r' || c == '\t') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
      continue;
    }
    Token t;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (
          j < text.size() &&
          (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      t.kind = Token::Kind::kName;
      t.text.assign(text.substr(i, j - i));
      i = j;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) ||
              text[j] == '.' ||
              ((text[j] == '-' || text[j] == '+') &&
               (text[j - 1] == 'e' || text[j - 1] == 'E')))) {
        ++j;
      }
      t.kind = Token::Kind::kNumber;
      t.text.assign(text.substr(i, j - i));
      i = j;
    } else if (c == '"' || c == '\'') {
      size_t j = i + 1;
      std::string s;
      while (j < text.size() && text[j] != c) {
        if (text[j] == '\n') return LineError(number, "unterminated string");
        if (text[j] == '\\' && j + 1 < text.size()) {
          const char e = text[j + 1];
          if (e == 'n') {
            s += '\n';
          } else if (e == 't') {
            s += '\t';
          } else if (e == '\\' || e == '"' || e == '\'') {
            s += e;
          } else {
            return LineError(number, std::string("unsupported escape \\") + e);
          }
          j += 2;
          continue;
        }
        s += text[j++];
      }
      if (j >= text.size()) return LineError(number, "unterminated string");
      t.kind = Token::Kind::kString;
      t.text = std::move(s);
      i = j + 1;
    } else {
      t.kind = Token::Kind::kOp;
      if (c == '-' && i + 1 < text.size() && text[i + 1] == '>') {
        t.text = "->";
        i += 2;
      } else if (std::string_view("()[],:=.-").find(c) !=
                 std::string_view::npos) {
        t.text = std::string(1, c);
        ++i;
        if (c == '=' && i < text.size() && text[i] == '=')
          return LineError(number, "unsupported operator '=='");
        if (c == '(' || c == '[') ++depth;
        if (c == ')' || c == ']') {
          if (depth == 0) return LineError(number, "unbalanced brackets");
          --depth;
        }
      } else {
        return LineError(number,
                         std::string("unsupported character '") + c + "'");
      }
    }
    cur.tokens.push_back(std::move(t));
  }
  if (depth != 0)
    return LineError(number, "unbalanced brackets at the end of the file");
  if (!cur.tokens.empty()) lines.push_back(std::move(cur));
  return lines;
}

ExprPtr MakeExpr(Expr::Kind kind) {
  auto e = std::make_shared<Expr>();
  e->kind = kind;
  return e;
}

// Recursive descent over the tokens of one logical line.
class Parser {
 public:
  Parser(const std::vector<Token>& tokens, int line, size_t begin = 0,
         size_t end = std::string::npos)
      : t_(tokens),
        line_(line),
        at_(begin),
        end_(std::min(end, tokens.size())) {}

  bool Done() const { return at_ >= end_; }
  bool Peek(const char* op) const {
    return !Done() && t_[at_].kind == Token::Kind::kOp && t_[at_].text == op;
  }
  bool PeekName(const char* name) const {
    return !Done() && t_[at_].kind == Token::Kind::kName &&
           t_[at_].text == name;
  }
  size_t at() const { return at_; }

  Status Expect(const char* op) {
    if (!Peek(op))
      return LineError(line_, std::string("expected '") + op + "'" + Near());
    ++at_;
    return Status::Ok();
  }
  bool Accept(const char* op) {
    if (!Peek(op)) return false;
    ++at_;
    return true;
  }
  Result<std::string> Name() {
    if (Done() || t_[at_].kind != Token::Kind::kName)
      return LineError(line_, "expected a name" + Near());
    return t_[at_++].text;
  }
  std::string Near() const {
    return Done() ? " at the end of the line" : " near '" + t_[at_].text + "'";
  }

  // expr (',' expr)* [','] as a tuple if there is a comma.
  Result<ExprPtr> ExprList() {
    TORCHCOST_ASSIGN_OR_RETURN(ExprPtr first, Expression());
    if (!Peek(",")) return first;
    ExprPtr tuple = MakeExpr(Expr::Kind::kTuple);
    tuple->items.push_back(first);
    while (Accept(",")) {
      if (Done() || Peek(")") || Peek("=")) break;
      TORCHCOST_ASSIGN_OR_RETURN(ExprPtr next, Expression());
      tuple->items.push_back(next);
    }
    return tuple;
  }

  // NB: expressions nest at most kMaxDepth levels (brackets, calls, unary
  // minus), so that the recursion here and in the compiler stays bounded; what
  // torch.jit.save prints nests a few levels.
  static constexpr int kMaxDepth = 200;

  Result<ExprPtr> Expression() {
    if (++depth_ > kMaxDepth)
      return LineError(line_, "expression nested too deeply");
    Result<ExprPtr> e = ExpressionBody();
    --depth_;
    return e;
  }

  Result<ExprPtr> ExpressionBody() {
    if (Accept("-")) {
      TORCHCOST_ASSIGN_OR_RETURN(ExprPtr e, Expression());
      if (e->kind == Expr::Kind::kInt) {
        e->i = -e->i;
      } else if (e->kind == Expr::Kind::kFloat) {
        e->f = -e->f;
      } else {
        return LineError(line_, "unsupported unary minus");
      }
      return e;
    }
    TORCHCOST_ASSIGN_OR_RETURN(ExprPtr e, Atom());
    while (true) {
      if (Accept(".")) {
        ExprPtr a = MakeExpr(Expr::Kind::kAttr);
        a->base = e;
        TORCHCOST_ASSIGN_OR_RETURN(a->text, Name());
        e = a;
      } else if (Accept("(")) {
        ExprPtr call = MakeExpr(Expr::Kind::kCall);
        call->base = e;
        while (!Accept(")")) {
          if (!Done() && t_[at_].kind == Token::Kind::kName && at_ + 1 < end_ &&
              t_[at_ + 1].kind == Token::Kind::kOp && t_[at_ + 1].text == "=") {
            std::string key = t_[at_].text;
            at_ += 2;
            TORCHCOST_ASSIGN_OR_RETURN(ExprPtr v, Expression());
            call->kwargs.emplace_back(std::move(key), v);
          } else {
            if (!call->kwargs.empty())
              return LineError(line_,
                               "positional argument after a keyword argument");
            TORCHCOST_ASSIGN_OR_RETURN(ExprPtr v, Expression());
            call->items.push_back(v);
          }
          if (!Accept(",")) {
            TORCHCOST_RETURN_IF_ERROR(Expect(")"));
            break;
          }
        }
        e = call;
      } else if (Accept("[")) {
        ExprPtr sub = MakeExpr(Expr::Kind::kSubscript);
        sub->base = e;
        TORCHCOST_ASSIGN_OR_RETURN(ExprPtr index, ExprList());
        sub->items.push_back(index);
        TORCHCOST_RETURN_IF_ERROR(Expect("]"));
        e = sub;
      } else {
        return e;
      }
    }
  }

 private:
  Result<ExprPtr> Atom() {
    if (Done())
      return LineError(line_, "expected an expression at the end of the line");
    const Token& tok = t_[at_++];
    switch (tok.kind) {
      case Token::Kind::kName: {
        if (tok.text == "None") return MakeExpr(Expr::Kind::kNone);
        if (tok.text == "True" || tok.text == "False") {
          ExprPtr e = MakeExpr(Expr::Kind::kBool);
          e->b = tok.text == "True";
          return e;
        }
        if (tok.text == "inf" || tok.text == "nan") {
          ExprPtr e = MakeExpr(Expr::Kind::kFloat);
          e->f = tok.text == "inf" ? std::numeric_limits<double>::infinity()
                                   : std::numeric_limits<double>::quiet_NaN();
          return e;
        }
        static const char* kKeywords[] = {
            "if",     "else",  "elif",     "for",    "while",  "with", "lambda",
            "and",    "or",    "not",      "is",     "in",     "def",  "class",
            "return", "pass",  "raise",    "assert", "import", "from", "global",
            "yield",  "break", "continue", "del"};
        for (const char* k : kKeywords) {
          if (tok.text == k)
            return LineError(line_, "unsupported keyword '" + tok.text + "'");
        }
        ExprPtr e = MakeExpr(Expr::Kind::kName);
        e->text = tok.text;
        return e;
      }
      case Token::Kind::kNumber: {
        const std::string& s = tok.text;
        const bool is_float = s.find_first_of(".eE") != std::string::npos;
        char* end = nullptr;
        ExprPtr e = MakeExpr(is_float ? Expr::Kind::kFloat : Expr::Kind::kInt);
        errno = 0;
        if (is_float) {
          e->f = std::strtod(s.c_str(), &end);
        } else {
          e->i = std::strtoll(s.c_str(), &end, 10);
        }
        if (end != s.c_str() + s.size() || errno != 0)
          return LineError(line_, "bad number '" + s + "'");
        return e;
      }
      case Token::Kind::kString: {
        ExprPtr e = MakeExpr(Expr::Kind::kString);
        e->text = tok.text;
        return e;
      }
      case Token::Kind::kOp:
        break;
    }
    if (tok.text == "(" || tok.text == "[") {
      const bool list = tok.text == "[";
      const char* close = list ? "]" : ")";
      ExprPtr e = MakeExpr(list ? Expr::Kind::kList : Expr::Kind::kTuple);
      bool comma = false;
      while (!Accept(close)) {
        TORCHCOST_ASSIGN_OR_RETURN(ExprPtr item, Expression());
        e->items.push_back(item);
        if (Accept(",")) {
          comma = true;
          continue;
        }
        TORCHCOST_RETURN_IF_ERROR(Expect(close));
        break;
      }
      // Parenthesized.
      if (!list && e->items.size() == 1 && !comma) return e->items[0];
      return e;
    }
    return LineError(line_, "unexpected '" + tok.text + "'");
  }

  const std::vector<Token>& t_;
  int line_;
  size_t at_;
  size_t end_;
  int depth_ = 0;
};

// The text of tokens [begin, end), as an annotation is written
// ("Optional[bool]").
std::string TypeText(const std::vector<Token>& tokens, size_t begin,
                     size_t end) {
  std::string out;
  for (size_t k = begin; k < end; ++k) {
    out += tokens[k].text;
    if (tokens[k].text == ",") out += " ";
  }
  return out;
}

// Finds the first top-level occurrence of op `op` in tokens [begin, end).
size_t FindTop(const std::vector<Token>& tokens, const char* op, size_t begin,
               size_t end) {
  int depth = 0;
  for (size_t k = begin; k < end; ++k) {
    const Token& t = tokens[k];
    if (t.kind != Token::Kind::kOp) continue;
    if (t.text == "(" || t.text == "[") ++depth;
    if (t.text == ")" || t.text == "]") --depth;
    if (depth == 0 && t.text == op) return k;
  }
  return std::string::npos;
}

Result<std::vector<std::string>> StringList(const Line& line, size_t begin) {
  Parser p(line.tokens, line.number, begin);
  TORCHCOST_ASSIGN_OR_RETURN(ExprPtr e, p.Expression());
  if (!p.Done() || e->kind != Expr::Kind::kList)
    return LineError(line.number, "expected a list of names");
  std::vector<std::string> out;
  for (const ExprPtr& item : e->items) {
    if (item->kind != Expr::Kind::kString)
      return LineError(line.number, "expected a list of names");
    out.push_back(item->text);
  }
  return out;
}

Result<Method> ParseDef(const Line& line) {
  const std::vector<Token>& t = line.tokens;
  Method m;
  Parser p(t, line.number, 1);
  TORCHCOST_ASSIGN_OR_RETURN(m.name, p.Name());
  TORCHCOST_RETURN_IF_ERROR(p.Expect("("));
  size_t at = p.at();
  const size_t close = FindTop(t, ")", at - 1, t.size());
  if (close == std::string::npos)
    return LineError(line.number, "unterminated parameter list");
  while (at < close) {
    if (t[at].kind != Token::Kind::kName)
      return LineError(line.number, "unsupported parameter");
    std::string name = t[at].text;
    if (at + 1 >= close || t[at + 1].text != ":")
      return LineError(line.number,
                       "parameter '" + name + "' has no annotation");
    size_t next = FindTop(t, ",", at + 2, close);
    if (next == std::string::npos) next = close;
    if (FindTop(t, "=", at + 2, next) != std::string::npos)
      return LineError(line.number, "unsupported default argument");
    m.params.emplace_back(std::move(name), TypeText(t, at + 2, next));
    at = next + 1;
  }
  if (close + 1 >= t.size() || t[close + 1].text != "->")
    return LineError(line.number, "method without a return annotation");
  if (t.back().text != ":")
    return LineError(line.number, "expected ':' after the signature");
  m.returns = TypeText(t, close + 2, t.size() - 1);
  return m;
}

Result<Stmt> ParseStmt(const Line& line) {
  const std::vector<Token>& t = line.tokens;
  Stmt s;
  s.line = line.number;
  if (t[0].kind == Token::Kind::kName && t[0].text == "return") {
    s.kind = Stmt::Kind::kReturn;
    Parser p(t, line.number, 1);
    TORCHCOST_ASSIGN_OR_RETURN(s.value, p.ExprList());
    if (!p.Done()) return LineError(line.number, "unexpected" + p.Near());
    return s;
  }
  if (t[0].kind == Token::Kind::kName && t.size() > 1 &&
      t[1].kind == Token::Kind::kName) {
    return LineError(line.number, "unsupported statement '" + t[0].text + "'");
  }
  const size_t eq = FindTop(t, "=", 0, t.size());
  size_t value_at = 0;
  if (eq != std::string::npos) {
    s.kind = Stmt::Kind::kAssign;
    for (size_t k = 0; k < eq; ++k) {
      if (k % 2 == 0) {
        if (t[k].kind != Token::Kind::kName)
          return LineError(line.number, "unsupported assignment target");
        s.targets.push_back(t[k].text);
      } else if (t[k].text != ",") {
        return LineError(line.number, "unsupported assignment target");
      } else {
        s.unpack = true;
      }
    }
    if (s.targets.empty())
      return LineError(line.number, "assignment without a target");
    value_at = eq + 1;
  }
  Parser p(t, line.number, value_at);
  TORCHCOST_ASSIGN_OR_RETURN(s.value, p.ExprList());
  if (!p.Done()) return LineError(line.number, "unexpected" + p.Near());
  return s;
}

}  // namespace

std::string Expr::Dotted() const {
  if (kind == Kind::kName) return text;
  if (kind != Kind::kAttr || !base) return "";
  const std::string prefix = base->Dotted();
  return prefix.empty() ? "" : prefix + "." + text;
}

const Method* ClassDef::FindMethod(const std::string& name) const {
  for (const Method& m : methods) {
    if (m.name == name) return &m;
  }
  return nullptr;
}

Result<std::vector<ClassDef>> ParseSource(std::string_view text,
                                          const std::string& module) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<Line> lines, Tokenize(text));
  std::vector<ClassDef> classes;
  int member_indent = -1;  // Of the current class's members.
  Method* method = nullptr;
  int body_indent = -1;
  for (const Line& line : lines) {
    const std::vector<Token>& t = line.tokens;
    if (line.indent == 0) {
      // class NAME(BASE):
      if (t.size() != 6 || t[0].text != "class" ||
          t[1].kind != Token::Kind::kName || t[2].text != "(" ||
          t[3].kind != Token::Kind::kName || t[4].text != ")" ||
          t[5].text != ":") {
        return LineError(line.number,
                         "unsupported top-level statement '" + t[0].text + "'");
      }
      ClassDef c;
      c.name = module + "." + t[1].text;
      c.base = t[3].text;
      classes.push_back(std::move(c));
      member_indent = -1;
      method = nullptr;
      continue;
    }
    if (classes.empty())
      return LineError(line.number, "indented line outside a class");
    ClassDef& cls = classes.back();
    if (member_indent < 0) member_indent = line.indent;
    if (line.indent < member_indent)
      return LineError(line.number, "inconsistent indentation");
    if (line.indent > member_indent) {
      if (method == nullptr)
        return LineError(line.number, "indented line outside a method");
      if (body_indent < 0) body_indent = line.indent;
      if (line.indent != body_indent)
        return LineError(line.number, "unsupported nested block");
      TORCHCOST_ASSIGN_OR_RETURN(Stmt s, ParseStmt(line));
      method->body.push_back(std::move(s));
      continue;
    }
    method = nullptr;
    if (t[0].kind == Token::Kind::kName && t[0].text == "def") {
      TORCHCOST_ASSIGN_OR_RETURN(Method m, ParseDef(line));
      cls.methods.push_back(std::move(m));
      method = &cls.methods.back();
      body_indent = -1;
      continue;
    }
    if (t.size() >= 3 && t[1].text == "=" && t[0].kind == Token::Kind::kName) {
      if (t[0].text == "__parameters__") {
        TORCHCOST_ASSIGN_OR_RETURN(cls.parameters, StringList(line, 2));
      } else if (t[0].text == "__buffers__") {
        TORCHCOST_ASSIGN_OR_RETURN(cls.buffers, StringList(line, 2));
      } else if (t[0].text == "__constants__") {
        cls.has_constants = true;
      } else {
        return LineError(line.number, "unsupported class statement '" +
                                          t[0].text + " = ...'");
      }
      continue;
    }
    if (t.size() >= 7 && t[0].text == "__annotations__" && t[1].text == "[" &&
        t[2].kind == Token::Kind::kString && t[3].text == "]" &&
        t[4].text == "=") {
      cls.attributes.emplace_back(t[2].text, TypeText(t, 5, t.size()));
      continue;
    }
    if (t.size() >= 3 && t[0].kind == Token::Kind::kName && t[1].text == ":") {
      if (FindTop(t, "=", 2, t.size()) != std::string::npos) {
        return LineError(line.number,
                         "unsupported class constant '" + t[0].text + "'");
      }
      cls.attributes.emplace_back(t[0].text, TypeText(t, 2, t.size()));
      continue;
    }
    return LineError(line.number,
                     "unsupported class statement '" + t[0].text + "'");
  }
  return classes;
}

Result<ExprPtr> ParseExpr(std::string_view text) {
  TORCHCOST_ASSIGN_OR_RETURN(std::vector<Line> lines, Tokenize(text));
  if (lines.size() != 1)
    return Status::InvalidArgument("expected one expression");
  Parser p(lines[0].tokens, lines[0].number);
  TORCHCOST_ASSIGN_OR_RETURN(ExprPtr e, p.ExprList());
  if (!p.Done()) return LineError(lines[0].number, "unexpected" + p.Near());
  return e;
}

}  // namespace torchcost::import::ts
