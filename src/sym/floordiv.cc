// FloorDiv and its guarded simplifications; CeilDiv, Mod, Min and Max.
//
// NB: every rule below relies on the divisor being positive, which FloorDiv
// checks first (bounds lo >= 1). Ranges only ever narrow (Context::SetRange),
// so a rule proved once stays valid.
#include <algorithm>
#include <string>

#include "sym/node.h"
#include "torchcost/sym.h"

namespace torchcost::sym {
namespace {

std::string BoundText(int64_t v) {
  if (v == kNegInf) return "-inf";
  if (v == kPosInf) return "inf";
  return std::to_string(v);
}

std::string IntervalText(const Interval& i) {
  // Open at an infinite end: [0, inf), (-inf, 5].
  return (i.lo == kNegInf ? "(" : "[") + BoundText(i.lo) + ", " +
         BoundText(i.hi) + (i.hi == kPosInf ? ")" : "]");
}

// Throws unless `b` is provably positive.
void CheckDivisor(Context* ctx, const Expr& a, const Expr& b, const char* op) {
  if (b.IsConstant()) {
    if (*b.AsConstant() <= 0) {
      throw Error(std::string(op) + "(" + a.ToString() + ", " + b.ToString() +
                  "): the divisor " + b.ToString() + " is not positive");
    }
    return;
  }
  Interval ib = ctx->impl()->Bounds(b);
  if (ib.lo < 1) {
    throw Error(std::string(op) + "(" + a.ToString() + ", " + b.ToString() +
                "): the divisor '" + b.ToString() +
                "' is not provably positive; its bounds are " +
                IntervalText(ib));
  }
}

// Returns e / g, where g > 0 divides every coefficient and the constant of e.
Expr DivideExact(const Expr& e, int64_t g) {
  if (e.IsConstant()) return *e.AsConstant() / g;
  LinView v;
  ViewLinear(e, &v);
  OperandVec out;
  for (size_t i = 0; i < v.num_terms; ++i) {
    out.push_back({v.terms[i].node, v.terms[i].k / g});
  }
  return e.context()->impl()->MakeSum(v.constant / g, out.data(), out.size());
}

// Returns the largest monomial (product of atoms, no coefficient) dividing
// every term of a and b, or nullptr if it is 1 or either has a constant.
const Node* CommonMonomial(Context::Impl* impl, const LinView& a,
                           const LinView& b) {
  if (a.constant != 0 || b.constant != 0 || a.num_terms == 0) return nullptr;
  OperandVec common;
  TermView first;
  ViewTerm(a.terms[0].node, &first);
  for (size_t i = 0; i < first.num_factors; ++i)
    common.push_back(first.factors[i]);
  auto intersect = [&](const Node* term) {
    TermView v;
    ViewTerm(term, &v);
    OperandVec next;
    size_t j = 0;
    for (const Operand& f : common) {
      while (j < v.num_factors && CompareAtoms(v.factors[j].node, f.node) < 0)
        ++j;
      if (j < v.num_factors && v.factors[j].node == f.node) {
        next.push_back(
            {f.node,
             std::min(f.k, v.factors[j].k)});  // gcd(x^p, x^q) = x^min(p,q).
      }
    }
    common.clear();
    for (const Operand& f : next) common.push_back(f);
  };
  for (size_t i = 1; i < a.num_terms && !common.empty(); ++i)
    intersect(a.terms[i].node);
  for (size_t i = 0; i < b.num_terms && !common.empty(); ++i)
    intersect(b.terms[i].node);
  return impl->MakeProduct(common.data(), common.size());
}

// Returns e / t, where the monomial t divides every term of e and e has no
// constant.
Expr DivideByMonomial(Context::Impl* impl, const LinView& e, const Node* t) {
  OperandVec out;
  int64_t constant = 0;
  for (size_t i = 0; i < e.num_terms; ++i) {
    const Node* q = nullptr;
    DivideTerm(impl, e.terms[i].node, t, &q);
    if (q == nullptr) {
      constant = e.terms[i].k;  // At most one term equals t.
    } else {
      out.push_back({q, e.terms[i].k});
    }
  }
  std::sort(out.begin(), out.end(), [](const Operand& x, const Operand& y) {
    return CompareTerms(x.node, y.node) < 0;
  });
  return impl->MakeSum(constant, out.data(), out.size());
}

// Returns true iff the bounds of `e` prove e >= 1.
bool ProvablyPositive(Context::Impl* impl, const Expr& e) {
  return impl->Bounds(e).lo >= 1;
}

// Returns true and sets *q if q*b <= a < (q+1)*b is provable for a candidate q.
bool ProveQuotient(Context::Impl* impl, const Expr& a, const Expr& b,
                   const Interval& guess, int64_t* q) {
  int64_t candidates[4] = {0, 1, guess.lo, guess.hi};
  for (int i = 0; i < 4; ++i) {
    int64_t c = candidates[i];
    if (c == kNegInf || c == kPosInf) continue;
    if (std::find(candidates, candidates + i, c) != candidates + i) continue;
    try {
      // a - c*b >= 0 and (c+1)*b - a >= 1.
      if (impl->Bounds(a - Scale(b, c)).lo >= 0 &&
          ProvablyPositive(impl, Scale(b, CheckedAdd(c, 1, "floordiv")) - a)) {
        *q = c;
        return true;
      }
    } catch (const Error&) {
      // An overflow only means this candidate cannot be proved.
    }
  }
  return false;
}

Expr MinMax(Kind kind, const Expr& a, const Expr& b) {
  bool is_min = kind == Kind::kMin;
  if (a.IsConstant() && b.IsConstant()) {
    return is_min ? std::min(*a.AsConstant(), *b.AsConstant())
                  : std::max(*a.AsConstant(), *b.AsConstant());
  }
  if (a == b) return a;  // min(x, x) = max(x, x) = x.
  Context* ctx = CommonContext(a, b);
  try {
    Interval d = ctx->impl()->Bounds(b - a);
    if (d.lo >= 0) return is_min ? a : b;  // b - a >= 0, so a <= b.
    if (d.hi <= 0) return is_min ? b : a;  // b - a <= 0, so b <= a.
  } catch (const Error&) {
    // b - a overflowed: undecided, keep the node.
  }
  // NB: min and max are commutative; the arguments are kept in structural
  // order.
  bool swap = CompareExprs(a, b) > 0;
  return Expr::FromNode(
      ctx->impl()->MakeOpaque(kind, swap ? b : a, swap ? a : b));
}

}  // namespace

Expr FloorDiv(const Expr& a, const Expr& b) {
  Context* ctx = CommonContext(a, b);
  CheckDivisor(ctx, a, b, "floordiv");
  // 1. Constant fold (b >= 1, so INT64_MIN / b cannot overflow).
  if (a.IsConstant() && b.IsConstant()) {
    return FloorDivInt(*a.AsConstant(), *b.AsConstant());
  }
  if (a == Expr(0)) return 0;  // floor(0 / b) = 0.
  if (a == b) return 1;        // floor(b / b) = 1 for b >= 1.
  // 2. floordiv(x, 1) = x.
  if (b == Expr(1)) return a;
  Context::Impl* impl = ctx->impl();
  // 3. floordiv(floordiv(x, c), b) = floordiv(x, c*b) for c, b >= 1:
  //    floor(floor(x/c)/b) = floor(x/(c*b)) for positive integers c, b.
  if (a.kind() == Kind::kFloorDiv) {
    return FloorDiv(a.node()->lhs, a.node()->rhs * b);
  }
  LinView va, vb;
  ViewLinear(a, &va);
  ViewLinear(b, &vb);
  // 4. gcd reduction: floordiv(g*x, g*y) = floordiv(x, y) for g >= 1.
  uint64_t g = AbsU(va.constant);
  for (size_t i = 0; i < va.num_terms && g != 1; ++i)
    g = GcdU(g, AbsU(va.terms[i].k));
  g = GcdU(g, AbsU(vb.constant));
  for (size_t i = 0; i < vb.num_terms && g != 1; ++i)
    g = GcdU(g, AbsU(vb.terms[i].k));
  if (g > 1 && g <= static_cast<uint64_t>(kPosInf)) {
    int64_t gi = static_cast<int64_t>(g);
    return FloorDiv(DivideExact(a, gi), DivideExact(b, gi));
  }
  // 4b. The same for a common monomial t >= 1: floordiv(t*x, t*y) = floordiv(x,
  // y).
  if (const Node* t = CommonMonomial(impl, va, vb)) {
    if (impl->NodeBounds(t).lo >= 1) {
      Expr x = DivideByMonomial(impl, va, t), y = DivideByMonomial(impl, vb, t);
      if (ProvablyPositive(impl, y)) return FloorDiv(x, y);
    }
  }
  // 5. Pull out exact multiples of a monomial divisor d*t:
  //    floordiv(d*t*q + r, d*t) = q + floordiv(r, d*t), as d*t*q / (d*t) = q is
  //    an integer.
  const Node* dterm = nullptr;  // nullptr: the divisor is the constant dc.
  int64_t dc = 0;
  if (b.IsConstant()) {
    dc = *b.AsConstant();
  } else if (vb.constant == 0 && vb.num_terms == 1 && vb.terms[0].k > 0) {
    dterm = vb.terms[0].node;
    dc = vb.terms[0].k;
  }
  if (dc > 0) {
    OperandVec pulled, rest;
    int64_t pulled_c = 0, rest_c = va.constant;
    bool any = false;
    for (size_t i = 0; i < va.num_terms; ++i) {
      const Operand& t = va.terms[i];
      const Node* q = nullptr;
      if (t.k % dc == 0 && DivideTerm(impl, t.node, dterm, &q)) {
        any = true;
        if (q == nullptr) {
          pulled_c = CheckedAdd(pulled_c, t.k / dc, "floordiv");
        } else {
          pulled.push_back({q, t.k / dc});
        }
      } else {
        rest.push_back(t);
      }
    }
    // NB: the constant is pulled out only when it is an exact multiple of a
    // constant divisor, so floordiv(H - 1, 2) stays as written (not
    // floordiv(H + 1, 2) - 1).
    if (dterm == nullptr && va.constant != 0 && va.constant % dc == 0) {
      any = true;
      pulled_c = CheckedAdd(pulled_c, va.constant / dc, "floordiv");
      rest_c = 0;
    }
    if (any) {
      std::sort(pulled.begin(), pulled.end(),
                [](const Operand& x, const Operand& y) {
                  return CompareTerms(x.node, y.node) < 0;
                });
      Expr quotient = impl->MakeSum(pulled_c, pulled.data(), pulled.size());
      Expr remainder = impl->MakeSum(rest_c, rest.data(), rest.size());
      return quotient + FloorDiv(remainder, b);
    }
  }
  // 6. Bounds: if every value of a / b floors to the same q, the result is q.
  Interval ia = impl->Bounds(a);
  Interval ib = impl->Bounds(b);
  Interval iq = FloorDivIntervals(ia, ib);
  if (iq.lo == iq.hi && iq.lo != kNegInf && iq.lo != kPosInf) return iq.lo;
  if (!b.IsConstant()) {
    // Relational form (e.g. 0 <= H - 1 < H): q*b <= a < (q+1)*b gives q.
    int64_t q;
    if (ProveQuotient(impl, a, b, iq, &q)) return q;
  }
  return Expr::FromNode(impl->MakeOpaque(Kind::kFloorDiv, a, b));
}

Expr CeilDiv(const Expr& a, const Expr& b) {
  CheckDivisor(CommonContext(a, b), a, b, "ceildiv");
  // ceil(a / b) = floor((a + b - 1) / b) for b >= 1.
  return FloorDiv(a + b - 1, b);
}

Expr Mod(const Expr& a, const Expr& b) {
  CheckDivisor(CommonContext(a, b), a, b, "mod");
  // mod(a, b) = a - b * floor(a / b), in [0, b) for b >= 1.
  return a - b * FloorDiv(a, b);
}

Expr Min(const Expr& a, const Expr& b) { return MinMax(Kind::kMin, a, b); }
Expr Max(const Expr& a, const Expr& b) { return MinMax(Kind::kMax, a, b); }

}  // namespace torchcost::sym
