// Symbolic integers: the dims and integer scalars that flow through a graph.
//
// An Expr is an int64 constant held inline, or a pointer to a node interned in
// a Context, so equality is a pointer compare. Expressions are canonical at
// construction: a sum of coefficient * term plus a constant, where a term is a
// product of atoms with positive exponents and an atom is a symbol or an
// opaque FloorDiv / Min / Max node. The order of terms and atoms is structural
// (never by address), so printed text is stable from run to run.
//
// NB: arithmetic is checked int64. An overflow, a division by a divisor not
// provably positive, or mixing expressions of two contexts throws sym::Error
// (a std::runtime_error). Every Result-returning entry point of torchcost
// (Parse, Evaluate, the analysis) catches it, so no exception crosses the
// public API of the library as a whole; callers composing Exprs by hand may
// catch sym::Error themselves.
#ifndef TORCHCOST_SYM_H_
#define TORCHCOST_SYM_H_

#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "torchcost/inline_list.h"
#include "torchcost/status.h"

namespace torchcost::sym {

class Context;
struct Node;  // Defined in src/sym; opaque here.

// Thrown by Expr arithmetic on overflow or an invalid divisor.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The answer to a comparison between expressions: proven, disproven, or
// unknown.
enum class Truth { kFalse = 0, kTrue = 1, kUnknown = 2 };

// NB: kNegInf and kPosInf stand for minus and plus infinity in intervals.
inline constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
inline constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();

// A closed interval of int64 values; the ends may be kNegInf / kPosInf.
struct Interval {
  int64_t lo = kNegInf;
  int64_t hi = kPosInf;
  bool Contains(int64_t v) const { return lo <= v && v <= hi; }
  bool operator==(const Interval& o) const { return lo == o.lo && hi == o.hi; }
};

// The kind of an Expr's root.
enum class Kind { kConstant, kSymbol, kSum, kProduct, kFloorDiv, kMin, kMax };

// A symbolic integer: a cheap-to-copy value type.
class Expr {
 public:
  // Returns the constant 0.
  Expr() = default;
  // Returns the constant `value`.
  Expr(int64_t value) : value_(value) {}  // NOLINT: implicit by design.
  Expr(int value) : value_(value) {}      // NOLINT: implicit by design.

  // Returns the value if this is a constant.
  std::optional<int64_t> AsConstant() const {
    return node_ == nullptr ? std::optional<int64_t>(value_) : std::nullopt;
  }
  bool IsConstant() const { return node_ == nullptr; }
  // Returns the kind of the root of this expression.
  Kind kind() const;
  // Returns the interned node, or nullptr for a constant.
  const Node* node() const { return node_; }
  // Returns the context that owns this expression, or nullptr for a constant.
  Context* context() const;

  // Returns true iff both expressions are the same canonical expression.
  bool operator==(const Expr& o) const {
    return node_ == o.node_ && value_ == o.value_;
  }
  bool operator!=(const Expr& o) const { return !(*this == o); }
  // Returns a hash consistent with operator==.
  size_t Hash() const {
    return node_ ? std::hash<const void*>()(node_)
                 : std::hash<int64_t>()(value_);
  }

  // Returns the canonical text, in the grammar Parse reads (e.g. "2*B*H +
  // floordiv(W - 1, 2) + 1").
  std::string ToString() const;

  // For internal use by the implementation: wraps an interned node.
  static Expr FromNode(const Node* node) {
    Expr e;
    e.node_ = node;
    return e;
  }

 private:
  const Node* node_ = nullptr;
  int64_t value_ = 0;
};

// A tensor's sizes, outermost first; up to four in place (a transformer's
// [B, heads, S, head_dim]), so copying a shape allocates nothing.
using Shape = InlineList<Expr, 4>;

Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator*(const Expr& a, const Expr& b);
inline Expr& operator+=(Expr& a, const Expr& b) { return a = a + b; }
inline Expr& operator-=(Expr& a, const Expr& b) { return a = a - b; }
inline Expr& operator*=(Expr& a, const Expr& b) { return a = a * b; }

// Returns floor(a / b), rounding toward minus infinity; b must be provably
// positive.
Expr FloorDiv(const Expr& a, const Expr& b);
// Returns ceil(a / b) = FloorDiv(a + b - 1, b); b must be provably positive.
Expr CeilDiv(const Expr& a, const Expr& b);
// Returns a - b * FloorDiv(a, b), in [0, b); b must be provably positive.
Expr Mod(const Expr& a, const Expr& b);
// Returns the smaller of a and b.
Expr Min(const Expr& a, const Expr& b);
// Returns the larger of a and b.
Expr Max(const Expr& a, const Expr& b);
// Returns a raised to a non-negative constant power.
Expr Pow(const Expr& a, int64_t exponent);

// Values given to symbols when an expression is evaluated.
using Bindings = std::unordered_map<std::string, int64_t>;

// Owns and interns the nodes of expressions and the symbols' intervals.
//
// A Context is not thread-safe; use one per analysis (or per thread). It must
// outlive every Expr built from it. Copying is disabled.
class Context {
 public:
  Context();
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  // Returns the symbol named `name`, creating it with `range` if new (dims
  // default to [1, inf)). NB: a symbol's range is fixed at first creation;
  // later calls ignore `range`.
  Expr Symbol(std::string_view name, Interval range = Interval{1, kPosInf});
  // Returns a fresh symbol whose name starts with `prefix` (u0, u1, ...).
  Expr FreshSymbol(std::string_view prefix = "u",
                   Interval range = Interval{1, kPosInf});
  // Returns the symbol named `name` if it exists.
  std::optional<Expr> FindSymbol(std::string_view name) const;
  // Narrows the interval of an existing symbol; returns an error if `name` is
  // unknown or the range is empty.
  Status SetRange(std::string_view name, Interval range);
  // Returns the interval of a symbol.
  Interval SymbolRange(const Expr& symbol) const;

  // Returns an interval that contains every value `e` takes for symbols within
  // their ranges.
  Interval Bounds(const Expr& e);
  // Returns whether a == b (proved by simplifying a - b and bounding it).
  Truth ProveEq(const Expr& a, const Expr& b);
  // Returns whether a <= b.
  Truth ProveLe(const Expr& a, const Expr& b);
  // Returns whether a < b.
  Truth ProveLt(const Expr& a, const Expr& b);

  // Returns the number of interned nodes (for tests and benchmarks).
  size_t NodeCount() const;

  struct Impl;
  Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// One term of an expression's canonical sum: coeff * term, where term is an
// atom or a product of atoms (never a constant or a sum).
struct LinearTerm {
  Expr term;
  int64_t coeff = 0;
};
// Returns the constant of `e`'s canonical sum and sets `terms` to its other
// terms in canonical order; e == constant + sum of coeff * term.
int64_t LinearTerms(const Expr& e, std::vector<LinearTerm>* terms);

// Returns the names of the symbols in `e`, sorted.
std::vector<std::string> FreeSymbols(const Expr& e);
// Returns the sorted, distinct symbols of all of `exprs` (shared subexpressions
// visited once).
std::vector<std::string> FreeSymbols(const std::vector<Expr>& exprs);
// Returns `e` with symbols in `bindings` replaced by their values (others
// kept).
Expr Substitute(const Expr& e, const Bindings& bindings);
// Returns the value of `e`; an error names the first unbound symbol, or reports
// overflow.
Result<int64_t> Evaluate(const Expr& e, const Bindings& bindings);
// Returns the value of `e` in 128-bit arithmetic, for totals such as FLOPs per
// step.
Result<__int128> Evaluate128(const Expr& e, const Bindings& bindings);
// Parses the grammar ToString prints: integers, symbols, + - * ^ (constant
// exponent), parentheses, floordiv(a, b), ceildiv(a, b), mod(a, b), min(a, b),
// max(a, b). Unknown symbols are created in `ctx` with the default dim range
// [1, inf).
Result<Expr> Parse(Context& ctx, std::string_view text);

// A set of expressions compiled to a flat program over a fixed symbol order,
// for evaluating the same totals under many bindings fast (batch-size curves,
// NAS).
class Program {
 public:
  // Compiles `exprs`; every free symbol must appear in `symbols`.
  static Result<Program> Compile(const std::vector<Expr>& exprs,
                                 const std::vector<std::string>& symbols);
  // Evaluates every expression with symbols[i] = values[i]; writes exprs.size()
  // results to `out`. Returns an error on overflow of 128-bit arithmetic.
  Status Run(const int64_t* values, __int128* out) const;
  // Evaluates as Run in checked 64-bit arithmetic (faster); returns false if a
  // step overflows int64 or divides by zero (then Run gives the exact answer).
  bool Run64(const int64_t* values, int64_t* out) const;
  size_t num_outputs() const { return outputs_.size(); }

  // One instruction of the flat program (register machine over int128).
  struct Instr {
    enum Op : uint8_t { kConst, kSym, kAdd, kMul, kFloorDiv, kMin, kMax } op;
    int32_t a = 0, b = 0;  // Operand registers, or the symbol index for kSym.
    __int128 imm = 0;      // The constant for kConst.
  };

 private:
  std::vector<Instr> code_;
  std::vector<int32_t> outputs_;  // Register holding each output.
};

// Returns the decimal text of a 128-bit integer.
std::string Int128ToString(__int128 v);

}  // namespace torchcost::sym

template <>
struct std::hash<torchcost::sym::Expr> {
  size_t operator()(const torchcost::sym::Expr& e) const { return e.Hash(); }
};

#endif  // TORCHCOST_SYM_H_
