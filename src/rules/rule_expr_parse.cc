// Parsing of rule-expression text into an ExprPool; see rule_expr.h.
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "rules/rule_expr.h"

namespace torchcost::rules {
namespace {

using Op = AstNode::Op;

const std::unordered_map<std::string_view, Fn>& FunctionTable() {
  static const auto* kTable = new std::unordered_map<std::string_view, Fn>{
      {"floordiv", Fn::kFloorDiv},
      {"ceildiv", Fn::kCeilDiv},
      {"mod", Fn::kMod},
      {"min", Fn::kMin},
      {"max", Fn::kMax},
      {"exact_div", Fn::kExactDiv},
      {"prod", Fn::kProd},
      {"sum", Fn::kSum},
      {"len", Fn::kLen},
      {"ones", Fn::kOnes},
      {"broadcast", Fn::kBroadcast},
      {"shape", Fn::kShape},
      {"rank", Fn::kRank},
      {"numel", Fn::kNumel},
      {"has", Fn::kHas},
      {"if", Fn::kIf},
      {"normdim", Fn::kNormDim},
      {"device", Fn::kDevice},
      {"ind", Fn::kInd},
      {"attention_backend", Fn::kAttentionBackend},
      {"torch_version", Fn::kTorchVersion},
      {"einsum_sizes", Fn::kEinsumSizes},
      {"dtype", Fn::kDType},
      {"itemsize", Fn::kItemSize},
      {"is_list", Fn::kIsList},
  };
  return *kTable;
}

// NB: a documented limit: the parser and the evaluator recurse once per level
// of nesting (brackets, calls, unary operators, powers) and the evaluator once
// per level of the tree (a chain "a + a + ... + a" is as deep as it is long),
// so deeper expressions are errors rather than a stack overflow. The built-in
// rules nest fewer than 20 levels.
constexpr int kMaxNesting = 200;

// Recursive-descent parser; precedence from low to high: or, and, not,
// comparison, + -, *, unary -, ^, postfix [ ], primary.
class Parser {
 public:
  Parser(std::string_view text, const NameResolver& resolve, ExprPool* pool)
      : text_(text), resolve_(resolve), pool_(pool) {}

  int ParseAll() {
    int root = ParseOr();
    SkipSpace();
    if (pos_ != text_.size())
      Fail("unexpected '" + std::string(text_.substr(pos_, 1)) + "'");
    return root;
  }

 private:
  int Add(AstNode n) {
    // The tree's depth below the new node: one more than its deepest kid's.
    int depth = 1;
    for (int kid : n.kids) {
      if (kid >= first_node_)
        depth = std::max(depth, depth_[kid - first_node_] + 1);
    }
    if (depth > kMaxNesting)
      Fail("expression nested deeper than " + std::to_string(kMaxNesting) +
           " levels");
    pool_->nodes.push_back(std::move(n));
    depth_.push_back(depth);
    return static_cast<int>(pool_->nodes.size()) - 1;
  }
  // Counts one level of the parser's recursion while it lives.
  class Nest {
   public:
    explicit Nest(Parser* p) : p_(p) {
      if (++p_->nesting_ > kMaxNesting) {
        p_->Fail("expression nested deeper than " +
                 std::to_string(kMaxNesting) + " levels");
      }
    }
    ~Nest() { --p_->nesting_; }

   private:
    Parser* p_;
  };
  int Binary(Op op, int a, int b, int col) {
    AstNode n;
    n.op = op;
    n.col = col;
    n.kids = {a, b};
    return Add(std::move(n));
  }
  int Unary(Op op, int a, int col) {
    AstNode n;
    n.op = op;
    n.col = col;
    n.kids = {a};
    return Add(std::move(n));
  }

  int ParseOr() {
    int lhs = ParseAnd();
    for (;;) {
      int col = SkipSpace();
      if (!EatWord("or")) return lhs;
      lhs = Binary(Op::kOr, lhs, ParseAnd(), col);
    }
  }
  int ParseAnd() {
    int lhs = ParseNot();
    for (;;) {
      int col = SkipSpace();
      if (!EatWord("and")) return lhs;
      lhs = Binary(Op::kAnd, lhs, ParseNot(), col);
    }
  }
  int ParseNot() {
    Nest nest(this);
    int col = SkipSpace();
    if (EatWord("not")) return Unary(Op::kNot, ParseNot(), col);
    return ParseCompare();
  }
  int ParseCompare() {
    int lhs = ParseAdditive();
    int col = SkipSpace();
    Op op;
    if (Eat("=="))
      op = Op::kEq;
    else if (Eat("!="))
      op = Op::kNe;
    else if (Eat("<="))
      op = Op::kLe;
    else if (Eat(">="))
      op = Op::kGe;
    else if (Eat("<"))
      op = Op::kLt;
    else if (Eat(">"))
      op = Op::kGt;
    else
      return lhs;
    return Binary(op, lhs, ParseAdditive(), col);
  }
  int ParseAdditive() {
    int lhs = ParseMultiplicative();
    for (;;) {
      int col = SkipSpace();
      if (Eat("+"))
        lhs = Binary(Op::kAdd, lhs, ParseMultiplicative(), col);
      else if (PeekChar('-')) {
        ++pos_;
        lhs = Binary(Op::kSub, lhs, ParseMultiplicative(), col);
      } else
        return lhs;
    }
  }
  int ParseMultiplicative() {
    int lhs = ParseUnary();
    for (;;) {
      int col = SkipSpace();
      if (PeekChar('*') &&
          !(pos_ + 1 < text_.size() && text_[pos_ + 1] == '*')) {
        ++pos_;
        lhs = Binary(Op::kMul, lhs, ParseUnary(), col);
      } else {
        return lhs;
      }
    }
  }
  int ParseUnary() {
    Nest nest(this);
    int col = SkipSpace();
    if (Eat("-")) return Unary(Op::kNeg, ParseUnary(), col);
    return ParsePower();
  }
  int ParsePower() {
    int base = ParsePostfix();
    int col = SkipSpace();
    if (Eat("^") || Eat("**")) return Binary(Op::kPow, base, ParseUnary(), col);
    return base;
  }
  int ParsePostfix() {
    int e = ParsePrimary();
    for (;;) {
      int col = SkipSpace();
      if (!Eat("[")) return e;
      SkipSpace();
      int start = -1, end = -1;
      if (!PeekChar(':')) start = ParseOr();
      SkipSpace();
      if (Eat(":")) {
        SkipSpace();
        if (!PeekChar(']')) end = ParseOr();
        Expect("]");
        AstNode n;
        n.op = Op::kSlice;
        n.col = col;
        n.kids = {e, start, end};
        e = Add(std::move(n));
      } else {
        Expect("]");
        e = Binary(Op::kIndex, e, start, col);
      }
    }
  }
  int ParsePrimary() {
    int col = SkipSpace();
    if (pos_ >= text_.size()) Fail("unexpected end of expression");
    char c = text_[pos_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             std::isdigit(static_cast<unsigned char>(text_[pos_])))
        ++pos_;
      // A float: digits, then a fraction (.digits) and an exponent (e or E,
      // a sign, digits), either optional. NB: a '-' or '+' belongs to the
      // number only right after its e: "1.5-2" is a subtraction.
      auto skip_digits = [&] {
        const size_t from = pos_;
        while (pos_ < text_.size() &&
               std::isdigit(static_cast<unsigned char>(text_[pos_])))
          ++pos_;
        return pos_ > from;
      };
      bool is_float = false;
      if (pos_ < text_.size() && text_[pos_] == '.') {
        is_float = true;
        ++pos_;
        skip_digits();
      }
      if (pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
        is_float = true;
        ++pos_;
        if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+'))
          ++pos_;
        if (!skip_digits())
          Fail("malformed number: its exponent has no digits");
      }
      std::string num(text_.substr(start, pos_ - start));
      AstNode n;
      n.col = col;
      if (is_float) {
        n.op = Op::kFloat;
        n.fval = std::strtod(num.c_str(), nullptr);
      } else {
        errno = 0;
        n.op = Op::kInt;
        n.ival = std::strtoll(num.c_str(), nullptr, 10);
        if (errno == ERANGE) Fail("integer literal out of range");
      }
      return Add(std::move(n));
    }
    if (c == '"' || c == '\'') {
      size_t end = text_.find(c, pos_ + 1);
      if (end == std::string_view::npos) Fail("unterminated string");
      AstNode n;
      n.op = Op::kString;
      n.col = col;
      n.sval = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
      pos_ = end + 1;
      return Add(std::move(n));
    }
    if (c == '(') {
      ++pos_;
      int e = ParseOr();
      Expect(")");
      return e;
    }
    if (c == '[') {
      ++pos_;
      AstNode n;
      n.op = Op::kList;
      n.col = col;
      SkipSpace();
      while (!PeekChar(']')) {
        SkipSpace();
        bool splat = Eat("*");
        n.kids.push_back(ParseOr());
        n.splat.push_back(splat);
        SkipSpace();
        if (Eat(",")) continue;
        if (!PeekChar(']')) Fail("expected ',' or ']' in list");
      }
      ++pos_;
      return Add(std::move(n));
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = pos_;
      while (pos_ < text_.size() &&
             (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
              text_[pos_] == '_'))
        ++pos_;
      std::string_view name = text_.substr(start, pos_ - start);
      if (name == "true" || name == "True" || name == "false" ||
          name == "False") {
        AstNode n;
        n.op = (name[0] == 't' || name[0] == 'T') ? Op::kTrue : Op::kFalse;
        n.col = col;
        return Add(std::move(n));
      }
      SkipSpace();
      if (PeekChar('(')) {
        auto it = FunctionTable().find(name);
        if (it == FunctionTable().end()) {
          pos_ = start;
          Fail("unknown function '" + std::string(name) + "'");
        }
        ++pos_;
        AstNode n;
        n.op = Op::kCall;
        n.fn = it->second;
        n.col = col;
        n.sval = std::string(name);
        SkipSpace();
        while (!PeekChar(')')) {
          n.kids.push_back(ParseOr());
          SkipSpace();
          if (Eat(",")) continue;
          if (!PeekChar(')'))
            Fail("expected ',' or ')' in call to " + std::string(name));
        }
        ++pos_;
        CheckArity(n);
        return Add(std::move(n));
      }
      int slot = resolve_(name);
      if (slot < 0) {
        pos_ = start;
        Fail("unknown name '" + std::string(name) + "'");
      }
      AstNode n;
      n.op = Op::kName;
      n.slot = slot;
      n.col = col;
      n.sval = std::string(name);
      return Add(std::move(n));
    }
    Fail("unexpected '" + std::string(1, c) + "'");
    return -1;
  }

  void CheckArity(const AstNode& n) {
    size_t want = 0;
    switch (n.fn) {
      case Fn::kFloorDiv:
      case Fn::kCeilDiv:
      case Fn::kMod:
      case Fn::kMin:
      case Fn::kMax:
      case Fn::kExactDiv:
      case Fn::kBroadcast:
      case Fn::kNormDim:
      case Fn::kEinsumSizes:
        want = 2;
        break;
      case Fn::kIf:
        want = 3;
        break;
      case Fn::kDevice:
      case Fn::kAttentionBackend:
      case Fn::kTorchVersion:
        want = 0;
        break;
      default:
        want = 1;
        break;
    }
    if (n.kids.size() != want) {
      pos_ = static_cast<size_t>(n.col);  // The error names the call's name.
      Fail(n.sval + "() takes " + std::to_string(want) + " argument" +
           (want == 1 ? "" : "s") + ", got " + std::to_string(n.kids.size()));
    }
  }

  int SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
    return static_cast<int>(pos_);
  }
  bool PeekChar(char c) const {
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool Eat(std::string_view tok) {
    if (text_.substr(pos_, tok.size()) != tok) return false;
    pos_ += tok.size();
    return true;
  }
  bool EatWord(std::string_view w) {
    if (text_.substr(pos_, w.size()) != w) return false;
    size_t after = pos_ + w.size();
    if (after < text_.size() &&
        (std::isalnum(static_cast<unsigned char>(text_[after])) ||
         text_[after] == '_'))
      return false;
    pos_ = after;
    return true;
  }
  void Expect(std::string_view tok) {
    SkipSpace();
    if (!Eat(tok)) Fail("expected '" + std::string(tok) + "'");
  }
  [[noreturn]] void Fail(const std::string& msg) {
    throw RuleError(msg, static_cast<int>(pos_));
  }

  std::string_view text_;
  const NameResolver& resolve_;
  ExprPool* pool_;
  size_t pos_ = 0;
  // Levels of ParseNot / ParseUnary now open.
  int nesting_ = 0;
  // Nodes before are other expressions'.
  const int first_node_ = static_cast<int>(pool_->nodes.size());
  // Tree depth of each node this parse added.
  std::vector<int> depth_;
};

}  // namespace

int ParseRuleExpr(std::string_view text, const NameResolver& resolve,
                  ExprPool* pool) {
  int root = Parser(text, resolve, pool).ParseAll();
  return root;
}

}  // namespace torchcost::rules
