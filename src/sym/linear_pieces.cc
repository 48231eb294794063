// ForEachLinearPiece and SumOver (linear_pieces.h): the pieces come from the
// expressions' structure, not from samples.
#include "sym/linear_pieces.h"

#include <algorithm>
#include <unordered_map>
#include <utility>

#include "sym/node.h"

namespace torchcost::sym {
namespace {

// Finds where expressions stop being affine in one symbol over a range.
class Cutter {
 public:
  Cutter(const Bindings& bindings, const std::string& symbol)
      : at_(bindings), symbol_(symbol) {}

  // Adds to cuts() points c (a piece ends at c) so that `e` is affine in the
  // symbol between consecutive cuts of lo..hi. Returns false where `e` is not
  // piecewise affine: a product or power of terms in the symbol, or a
  // floordiv of one.
  Result<bool> Cut(const Expr& e, int64_t lo, int64_t hi) {
    if (e.IsConstant() || !Depends(e.node())) return true;
    const Node* n = e.node();
    switch (n->kind) {
      case Kind::kConstant:
      case Kind::kSymbol:
        return true;
      case Kind::kSum:
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          TORCHCOST_ASSIGN_OR_RETURN(
              const bool affine, Cut(Expr::FromNode(n->ops[i].node), lo, hi));
          if (!affine) return false;
        }
        return true;
      case Kind::kProduct: {
        // Affine only as a constant times one affine factor.
        const Node* factor = nullptr;
        for (uint32_t i = 0; i < n->num_ops; ++i) {
          if (!Depends(n->ops[i].node)) continue;
          if (factor != nullptr || n->ops[i].k != 1) return false;
          factor = n->ops[i].node;
        }
        return Cut(Expr::FromNode(factor), lo, hi);
      }
      case Kind::kFloorDiv:
        return false;
      case Kind::kMin:
      case Kind::kMax: {
        TORCHCOST_ASSIGN_OR_RETURN(const bool left, Cut(n->lhs, lo, hi));
        if (!left) return false;
        TORCHCOST_ASSIGN_OR_RETURN(const bool right, Cut(n->rhs, lo, hi));
        if (!right) return false;
        // Both sides are affine between the cuts so far; where their difference
        // d changes sign inside a piece p..q, cut at the last x on p's side:
        // p + floor(d(p) (q - p) / (d(p) - d(q))).
        TORCHCOST_RETURN_IF_ERROR(Normalize(lo, hi));
        const std::vector<int64_t> ends = cuts_;
        int64_t p = lo;
        for (size_t i = 0; i <= ends.size(); ++i) {
          const int64_t q = i < ends.size() ? ends[i] : hi;
          TORCHCOST_ASSIGN_OR_RETURN(const __int128 dp, Difference(n, p));
          TORCHCOST_ASSIGN_OR_RETURN(const __int128 dq, Difference(n, q));
          if ((dp < 0 && dq > 0) || (dp > 0 && dq < 0)) {
            const __int128 num = dp * (q - p), den = dp - dq;
            // Both positive after flipping signs together: floor is division.
            const __int128 step = den > 0 ? num / den : (-num) / (-den);
            cuts_.push_back(
                std::min<int64_t>(p + static_cast<int64_t>(step), q - 1));
          }
          p = q + 1;
          if (p > hi) break;
        }
        return true;
      }
    }
    return false;
  }

  // Sorts the cuts, drops repeats and those outside lo..hi-1.
  Status Normalize(int64_t lo, int64_t hi) {
    std::sort(cuts_.begin(), cuts_.end());
    cuts_.erase(std::unique(cuts_.begin(), cuts_.end()), cuts_.end());
    cuts_.erase(std::remove_if(cuts_.begin(), cuts_.end(),
                               [&](int64_t c) { return c < lo || c >= hi; }),
                cuts_.end());
    return Status::Ok();
  }

  const std::vector<int64_t>& cuts() const { return cuts_; }

  // The value of `e` at symbol = x.
  Result<__int128> At(const Expr& e, int64_t x) {
    if (e.IsConstant()) return static_cast<__int128>(*e.AsConstant());
    at_[symbol_] = x;
    return Evaluate128(e, at_);
  }

 private:
  // lhs - rhs of a min or max at x.
  Result<__int128> Difference(const Node* n, int64_t x) {
    TORCHCOST_ASSIGN_OR_RETURN(const __int128 l, At(n->lhs, x));
    TORCHCOST_ASSIGN_OR_RETURN(const __int128 r, At(n->rhs, x));
    return l - r;
  }

  // True if the node mentions the symbol.
  bool Depends(const Node* n) {
    auto it = depends_.find(n);
    if (it != depends_.end()) return it->second;
    bool d = false;
    switch (n->kind) {
      case Kind::kConstant:
        break;
      case Kind::kSymbol:
        d = n->name == symbol_;
        break;
      case Kind::kSum:
      case Kind::kProduct:
        for (uint32_t i = 0; i < n->num_ops && !d; ++i)
          d = Depends(n->ops[i].node);
        break;
      case Kind::kFloorDiv:
      case Kind::kMin:
      case Kind::kMax:
        d = (!n->lhs.IsConstant() && Depends(n->lhs.node())) ||
            (!n->rhs.IsConstant() && Depends(n->rhs.node()));
        break;
    }
    depends_.emplace(n, d);
    return d;
  }

  Bindings at_;
  const std::string& symbol_;
  std::vector<int64_t> cuts_;
  std::unordered_map<const Node*, bool> depends_;
};

}  // namespace

Status ForEachLinearPiece(
    const std::vector<Expr>& exprs, const Bindings& bindings,
    const std::string& symbol, int64_t first, int64_t last,
    const std::function<void(const LinearPiece&)>& piece) {
  if (first > last) return Status::Ok();
  Cutter cutter(bindings, symbol);
  bool affine = true;
  for (const Expr& e : exprs) {
    TORCHCOST_ASSIGN_OR_RETURN(const bool a, cutter.Cut(e, first, last));
    affine = affine && a;
  }
  TORCHCOST_RETURN_IF_ERROR(cutter.Normalize(first, last));
  std::vector<__int128> at_lo, at_hi;
  auto values = [&](int64_t x, std::vector<__int128>& out) -> Status {
    out.clear();
    for (const Expr& e : exprs) {
      TORCHCOST_ASSIGN_OR_RETURN(const __int128 v, cutter.At(e, x));
      out.push_back(v);
    }
    return Status::Ok();
  };
  if (!affine) {
    // NB: not piecewise affine: one piece per value.
    for (int64_t x = first; x <= last; ++x) {
      TORCHCOST_RETURN_IF_ERROR(values(x, at_lo));
      piece(LinearPiece{x, x, &at_lo, &at_lo});
    }
    return Status::Ok();
  }
  int64_t lo = first;
  const std::vector<int64_t>& cuts = cutter.cuts();
  for (size_t i = 0; i <= cuts.size(); ++i) {
    const int64_t hi = i < cuts.size() ? cuts[i] : last;
    TORCHCOST_RETURN_IF_ERROR(values(lo, at_lo));
    TORCHCOST_RETURN_IF_ERROR(values(hi, at_hi));
    piece(LinearPiece{lo, hi, &at_lo, &at_hi});
    lo = hi + 1;
  }
  return Status::Ok();
}

Result<__int128> SumOver(const Expr& e, const Bindings& bindings,
                         const std::string& symbol, int64_t first,
                         int64_t last) {
  __int128 sum = 0;
  // An arithmetic series: (hi - lo + 1)(e(lo) + e(hi)) / 2, an integer: the
  // piece's values are integers in arithmetic progression.
  TORCHCOST_RETURN_IF_ERROR(ForEachLinearPiece(
      {e}, bindings, symbol, first, last, [&](const LinearPiece& p) {
        sum += (p.hi - p.lo + 1) * ((*p.at_lo)[0] + (*p.at_hi)[0]) / 2;
      }));
  return sum;
}

}  // namespace torchcost::sym
