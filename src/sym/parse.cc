// The one grammar of expressions: ToString prints it, Parse reads it.
//
//   sum     := term (('+' | '-') term)*
//   term    := unary ('*' unary)*
//   unary   := '-' unary | power
//   power   := primary ('^' INTEGER)?
//   primary := INTEGER | NAME | CALL '(' sum ',' sum ')' | '(' sum ')'
//   CALL    := floordiv | ceildiv | mod | min | max
//   NAME    := [A-Za-z_][A-Za-z0-9_.]*
//
// NB: '^' binds tighter than unary minus, so -B^2 = -(B^2). A literal of
// magnitude 2^63 is accepted only when negated, so INT64_MIN round-trips.
#include <cctype>
#include <string>
#include <vector>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

void AppendMagnitude(uint64_t v, std::string* out) {
  *out += std::to_string(v);
}

void PrintExpr(const Expr& e, std::string* out);

void PrintAtom(const Node* n, std::string* out) {
  switch (n->kind) {
    case Kind::kSymbol:
      out->append(n->name.data(), n->name.size());
      return;
    case Kind::kFloorDiv:
      *out += "floordiv(";
      break;
    case Kind::kMin:
      *out += "min(";
      break;
    case Kind::kMax:
      *out += "max(";
      break;
    default:
      *out += "?(";
  }
  PrintExpr(n->lhs, out);
  *out += ", ";
  PrintExpr(n->rhs, out);
  *out += ")";
}

void PrintTerm(const Node* t, std::string* out) {
  TermView v;
  ViewTerm(t, &v);
  for (size_t i = 0; i < v.num_factors; ++i) {
    if (i > 0) *out += "*";
    PrintAtom(v.factors[i].node, out);
    if (v.factors[i].k != 1) {
      *out += "^";
      *out += std::to_string(v.factors[i].k);
    }
  }
}

void PrintExpr(const Expr& e, std::string* out) {
  if (e.IsConstant()) {
    *out += std::to_string(*e.AsConstant());
    return;
  }
  LinView v;
  ViewLinear(e, &v);
  for (size_t i = 0; i < v.num_terms; ++i) {
    int64_t k = v.terms[i].k;
    if (i == 0) {
      if (k < 0) *out += "-";
    } else {
      *out += k < 0 ? " - " : " + ";
    }
    uint64_t mag = AbsU(k);
    if (mag != 1) {
      AppendMagnitude(mag, out);
      *out += "*";
    }
    PrintTerm(v.terms[i].node, out);
  }
  if (v.constant != 0) {
    *out += v.constant < 0 ? " - " : " + ";
    AppendMagnitude(AbsU(v.constant), out);
  }
}

struct ParseFailure {
  size_t pos;
  std::string message;
};

class Parser {
 public:
  Parser(Context& ctx, std::string_view text) : ctx_(ctx), text_(text) {}

  Expr ParseAll() {
    Expr e = ParseSum();
    SkipSpace();
    if (pos_ != text_.size()) {
      Fail(std::string("unexpected '") + text_[pos_] + "'");
    }
    return e;
  }

 private:
  [[noreturn]] void Fail(std::string message) {
    throw ParseFailure{pos_, std::move(message)};
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           std::isspace(static_cast<unsigned char>(text_[pos_]))) {
      ++pos_;
    }
  }

  bool Accept(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  void Expect(char c) {
    if (!Accept(c)) Fail(std::string("expected '") + c + "'");
  }

  Expr ParseSum() {
    // NB: a documented limit: each '(' and call recurses once; deeper nesting
    // is an error rather than a stack overflow ("((((...1))))" 100,000 deep).
    if (++depth_ > kMaxDepth)
      Fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    struct Leave {
      int& depth;
      ~Leave() { --depth; }
    } leave{depth_};
    std::vector<Expr> terms{ParseTerm(false)};
    while (true) {
      if (Accept('+')) {
        terms.push_back(ParseTerm(false));
      } else if (Accept('-')) {
        // a - t parsed as a + (-t), so 2^63 fits.
        terms.push_back(ParseTerm(true));
      } else {
        return SumPairwise(terms);
      }
    }
  }

  // Returns the sum of `terms`, added in pairs, then pairs of pairs.
  // NB: not left to right: every partial sum is interned for the context's
  // life, so a + b + c + ... of n terms kept n partial sums of up to n terms
  // (quadratic: re-parsing a printed sum of 16k terms took 1.7 GB); in pairs
  // the partial sums hold n log n terms in all. An intermediate overflow of a
  // coefficient may therefore depend on the grouping.
  static Expr SumPairwise(std::vector<Expr>& terms) {
    for (size_t width = 1; width < terms.size(); width *= 2) {
      for (size_t i = 0; i + width < terms.size(); i += 2 * width)
        terms[i] = terms[i] + terms[i + width];
    }
    return terms[0];
  }

  Expr ParseTerm(bool negate) {
    Expr e = ParseUnary(negate);
    while (Accept('*')) e = e * ParseUnary(false);
    return e;
  }

  Expr ParseUnary(bool negate) {
    // A loop, not recursion: "-----...1" may be long.
    while (Accept('-')) negate = !negate;
    return ParsePower(negate);
  }

  // Reads digits at pos_ as a magnitude up to 2^63.
  uint64_t ParseMagnitude() {
    size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < text_.size() &&
           std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      uint64_t d = static_cast<uint64_t>(text_[pos_] - '0');
      if (v > (static_cast<uint64_t>(1) << 63) / 10 ||
          v * 10 + d > (static_cast<uint64_t>(1) << 63)) {
        pos_ = start;
        Fail("integer literal out of range");
      }
      v = v * 10 + d;
      ++pos_;
    }
    return v;
  }

  Expr ParsePower(bool negate) {
    SkipSpace();
    size_t start = pos_;
    if (pos_ < text_.size() &&
        std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      uint64_t mag = ParseMagnitude();
      SkipSpace();
      bool has_power = pos_ < text_.size() && text_[pos_] == '^';
      if (!negate || has_power) {
        if (mag > static_cast<uint64_t>(kPosInf)) {
          pos_ = start;
          Fail("integer literal out of range");
        }
        Expr e = ApplyPower(Expr(static_cast<int64_t>(mag)));
        return negate ? -e : e;
      }
      // -mag, including -2^63 = INT64_MIN.
      return Expr(static_cast<int64_t>(0 - mag));
    }
    Expr e = ApplyPower(ParsePrimary());
    return negate ? -e : e;
  }

  Expr ApplyPower(const Expr& base) {
    if (!Accept('^')) return base;
    SkipSpace();
    if (pos_ >= text_.size() ||
        !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      Fail("expected a non-negative integer exponent");
    }
    size_t start = pos_;
    uint64_t mag = ParseMagnitude();
    if (mag > static_cast<uint64_t>(kPosInf)) {
      pos_ = start;
      Fail("exponent out of range");
    }
    return Pow(base, static_cast<int64_t>(mag));
  }

  Expr ParsePrimary() {
    SkipSpace();
    if (pos_ >= text_.size()) Fail("expected an expression");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      Expr e = ParseSum();
      Expect(')');
      return e;
    }
    if (!(std::isalpha(static_cast<unsigned char>(c)) || c == '_')) {
      Fail("expected an expression");
    }
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '_' || text_[pos_] == '.')) {
      ++pos_;
    }
    std::string_view name = text_.substr(start, pos_ - start);
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == '(') {
      size_t call_pos = start;
      ++pos_;
      Expr (*fn)(const Expr&, const Expr&) = nullptr;
      if (name == "floordiv")
        fn = &FloorDiv;
      else if (name == "ceildiv")
        fn = &CeilDiv;
      else if (name == "mod")
        fn = &Mod;
      else if (name == "min")
        fn = &Min;
      else if (name == "max")
        fn = &Max;
      if (fn == nullptr) {
        pos_ = start;
        Fail("unknown function '" + std::string(name) + "'");
      }
      Expr a = ParseSum();
      Expect(',');
      Expr b = ParseSum();
      Expect(')');
      try {
        return fn(a, b);
      } catch (const Error& e) {
        pos_ = call_pos;
        Fail(e.what());
      }
    }
    return ctx_.Symbol(name);
  }

  Context& ctx_;
  std::string_view text_;
  size_t pos_ = 0;
  int depth_ = 0;  // ParseSum calls now open.
  static constexpr int kMaxDepth = 200;
};

}  // namespace

std::string Expr::ToString() const {
  std::string out;
  PrintExpr(*this, &out);
  return out;
}

Result<Expr> Parse(Context& ctx, std::string_view text) {
  Parser parser(ctx, text);
  try {
    return parser.ParseAll();
  } catch (const ParseFailure& f) {
    return Status::ParseError("cannot parse '" + std::string(text) +
                              "': at column " + std::to_string(f.pos + 1) +
                              ": " + f.message);
  } catch (const Error& e) {
    return Status::ParseError("cannot parse '" + std::string(text) +
                              "': " + e.what());
  }
}

}  // namespace torchcost::sym
