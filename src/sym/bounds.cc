// Interval analysis over expressions (±inf aware) and the three-valued proofs.
//
// NB: kNegInf / kPosInf are INT64_MIN / INT64_MAX read as minus / plus
// infinity. Arithmetic on ends saturates to them instead of wrapping, which
// can only widen an interval, so every result stays sound.
#include <algorithm>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

bool IsInf(int64_t v) { return v == kNegInf || v == kPosInf; }

// Lower end of a sum: -inf wins (an unbounded-below operand stays unbounded).
int64_t AddLo(int64_t x, int64_t y) {
  if (x == kNegInf || y == kNegInf) return kNegInf;
  if (x == kPosInf || y == kPosInf) return kPosInf;
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) return x > 0 ? kPosInf : kNegInf;
  return r;
}

// Upper end of a sum: +inf wins.
int64_t AddHi(int64_t x, int64_t y) {
  if (x == kPosInf || y == kPosInf) return kPosInf;
  if (x == kNegInf || y == kNegInf) return kNegInf;
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) return x > 0 ? kPosInf : kNegInf;
  return r;
}

// Product of two ends. NB: inf * 0 = 0, since inf stands for "unbounded"
// finite values, and any of them times 0 is 0.
int64_t MulInf(int64_t x, int64_t y) {
  if (x == 0 || y == 0) return 0;
  bool negative = (x < 0) != (y < 0);
  if (IsInf(x) || IsInf(y)) return negative ? kNegInf : kPosInf;
  int64_t r;
  if (__builtin_mul_overflow(x, y, &r)) return negative ? kNegInf : kPosInf;
  return r;
}

int64_t PowInf(int64_t x, int64_t e) {
  // Square and multiply, saturating.
  int64_t result = 1;
  while (e > 0) {
    if (e & 1) result = MulInf(result, x);
    e >>= 1;
    if (e > 0) x = MulInf(x, x);
  }
  return result;
}

// floor(x / y) for y >= 1 where either may be infinite.
int64_t FloorDivInf(int64_t x, int64_t y) {
  if (x == kNegInf || x == kPosInf) return x;  // Unbounded stays unbounded.
  if (y == kPosInf) return x >= 0 ? 0 : -1;    // floor(x / huge) for finite x.
  return FloorDivInt(x, y);
}

}  // namespace

Interval AddIntervals(const Interval& a, const Interval& b) {
  return {AddLo(a.lo, b.lo), AddHi(a.hi, b.hi)};
}

Interval ScaleInterval(const Interval& a, int64_t k) {
  // k * [lo, hi] = [k*lo, k*hi] for k >= 0, [k*hi, k*lo] for k < 0.
  if (k >= 0) return {MulInf(a.lo, k), MulInf(a.hi, k)};
  return {MulInf(a.hi, k), MulInf(a.lo, k)};
}

Interval MulIntervals(const Interval& a, const Interval& b) {
  // The extremes of x*y over a box are at its corners (sign-aware).
  int64_t c[4] = {MulInf(a.lo, b.lo), MulInf(a.lo, b.hi), MulInf(a.hi, b.lo),
                  MulInf(a.hi, b.hi)};
  return {*std::min_element(c, c + 4), *std::max_element(c, c + 4)};
}

Interval PowInterval(const Interval& a, int64_t e) {
  if (e == 0) return {1, 1};
  if (e == 1) return a;
  int64_t plo = PowInf(a.lo, e), phi = PowInf(a.hi, e);
  if (e % 2 == 1) return {plo, phi};  // Odd powers are increasing.
  // Even powers decrease on x <= 0 and increase on x >= 0.
  if (a.lo >= 0) return {plo, phi};
  if (a.hi <= 0) return {phi, plo};
  return {0, std::max(plo, phi)};
}

Interval FloorDivIntervals(const Interval& a, const Interval& b) {
  if (b.lo < 1) return Interval{};  // Only positive divisors are bounded here.
  // floor(x / y) increases with x; for fixed x it is monotone in y >= 1
  // (decreasing if x >= 0, increasing if x < 0), so the corners bound it.
  int64_t lo = std::min(FloorDivInf(a.lo, b.lo), FloorDivInf(a.lo, b.hi));
  int64_t hi = std::max(FloorDivInf(a.hi, b.lo), FloorDivInf(a.hi, b.hi));
  return {lo, hi};
}

Interval Context::Impl::Bounds(const Expr& e) {
  if (e.IsConstant()) return {*e.AsConstant(), *e.AsConstant()};
  return NodeBounds(e.node());
}

Interval Context::Impl::NodeBounds(const Node* n) {
  if (n->bounds_epoch == epoch) return n->bounds;
  Interval r;
  switch (n->kind) {
    case Kind::kSymbol:
      r = n->range;
      break;
    case Kind::kSum:
      // constant + sum_i k_i * [term_i].
      r = {n->constant, n->constant};
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        r = AddIntervals(
            r, ScaleInterval(NodeBounds(n->ops[i].node), n->ops[i].k));
      }
      break;
    case Kind::kProduct:
      // prod_j [atom_j]^e_j.
      r = {1, 1};
      for (uint32_t i = 0; i < n->num_ops; ++i) {
        r = MulIntervals(r,
                         PowInterval(NodeBounds(n->ops[i].node), n->ops[i].k));
      }
      break;
    case Kind::kFloorDiv:
      r = FloorDivIntervals(Bounds(n->lhs), Bounds(n->rhs));
      break;
    case Kind::kMin: {
      Interval a = Bounds(n->lhs), b = Bounds(n->rhs);
      r = {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
      break;
    }
    case Kind::kMax: {
      Interval a = Bounds(n->lhs), b = Bounds(n->rhs);
      r = {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
      break;
    }
    default:
      r = Interval{};
  }
  n->bounds = r;
  n->bounds_epoch = epoch;
  return r;
}

Interval Context::Bounds(const Expr& e) {
  if (e.context() != nullptr && e.context() != this) {
    throw Error("Bounds: the expression belongs to another sym::Context");
  }
  return impl_->Bounds(e);
}

Truth Context::ProveEq(const Expr& a, const Expr& b) {
  if (a == b) return Truth::kTrue;
  try {
    Expr d = a - b;
    if (d.IsConstant())
      return *d.AsConstant() == 0 ? Truth::kTrue : Truth::kFalse;
    Interval i = Bounds(d);
    if (!i.Contains(0)) return Truth::kFalse;  // a - b is never 0.
  } catch (const Error&) {
    // NB: an overflow while forming a - b leaves the question open.
  }
  return Truth::kUnknown;
}

Truth Context::ProveLe(const Expr& a, const Expr& b) {
  if (a == b) return Truth::kTrue;
  try {
    Interval i = Bounds(b - a);
    if (i.lo >= 0) return Truth::kTrue;  // b - a >= 0.
    if (i.hi < 0) return Truth::kFalse;  // b - a < 0 everywhere.
  } catch (const Error&) {
  }
  return Truth::kUnknown;
}

Truth Context::ProveLt(const Expr& a, const Expr& b) {
  if (a == b) return Truth::kFalse;
  try {
    Interval i = Bounds(b - a);
    if (i.lo >= 1) return Truth::kTrue;   // b - a >= 1.
    if (i.hi <= 0) return Truth::kFalse;  // b - a <= 0 everywhere.
  } catch (const Error&) {
  }
  return Truth::kUnknown;
}

}  // namespace torchcost::sym
