#include "nas/dominance.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sym/node.h"

namespace torchcost::nas {
namespace {

// Exponents packed 8 bits each into a uint64 key.
constexpr size_t kMaxSymbols = 8;

// A polynomial in the shifted symbols: (packed exponents, coefficient), sorted
// by key.
using Shifted = std::vector<std::pair<uint64_t, __int128>>;

bool Mul(__int128 a, __int128 b, __int128* out) {
  return !__builtin_mul_overflow(a, b, out);
}
bool Add(__int128 a, __int128 b, __int128* out) {
  return !__builtin_add_overflow(a, b, out);
}

// Returns binomial(n, k) for small n.
__int128 Binomial(int64_t n, int64_t k) {
  __int128 r = 1;
  for (int64_t i = 1; i <= k; ++i) r = r * (n - k + i) / i;
  return r;
}

// Expands coeff * prod_a (lo_a + t_a)^e_a into `acc`; false on overflow.
bool ExpandTerm(__int128 coeff, const std::vector<int64_t>& exps,
                const std::vector<int64_t>& lo,
                std::map<uint64_t, __int128>* acc) {
  // Enumerate k_a in [0, e_a]: coefficient prod_a C(e_a, k_a) lo_a^(e_a - k_a)
  // of prod_a t_a^k_a.
  std::vector<int64_t> k(exps.size(), 0);
  while (true) {
    __int128 c = coeff;
    uint64_t key = 0;
    for (size_t a = 0; a < exps.size(); ++a) {
      if (!Mul(c, Binomial(exps[a], k[a]), &c)) return false;
      for (int64_t p = 0; p < exps[a] - k[a]; ++p) {
        if (!Mul(c, lo[a], &c)) return false;
      }
      key |= static_cast<uint64_t>(k[a]) << (8 * a);
    }
    if (!Add((*acc)[key], c, &(*acc)[key])) return false;
    size_t a = 0;
    while (a < exps.size() && k[a] == exps[a]) k[a++] = 0;
    if (a == exps.size()) return true;
    ++k[a];
  }
}

// Returns e as a shifted polynomial, or false if it has opaque atoms or
// overflows.
bool Shift(const sym::Expr& e,
           const std::unordered_map<const sym::Node*, size_t>& index,
           const std::vector<int64_t>& lo, Shifted* out) {
  std::map<uint64_t, __int128> acc;
  sym::LinView v;
  sym::ViewLinear(e, &v);
  if (v.constant != 0) acc[0] = v.constant;
  for (size_t t = 0; t < v.num_terms; ++t) {
    sym::TermView tv;
    sym::ViewTerm(v.terms[t].node, &tv);
    std::vector<int64_t> exps(lo.size(), 0);
    for (size_t f = 0; f < tv.num_factors; ++f) {
      auto it = index.find(tv.factors[f].node);
      if (it == index.end() || tv.factors[f].k > 255) return false;
      exps[it->second] = tv.factors[f].k;
    }
    if (!ExpandTerm(v.terms[t].k, exps, lo, &acc)) return false;
  }
  out->assign(acc.begin(), acc.end());
  return true;
}

// Returns true if b - a has only coefficients >= 0 (so a <= b).
bool Le(const Shifted& a, const Shifted& b) {
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      if (a[i++].second > 0) return false;  // b's coefficient is 0.
    } else if (i == a.size() || b[j].first < a[i].first) {
      if (b[j++].second < 0) return false;
    } else {
      if (b[j++].second < a[i++].second) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<int> UndominatedCandidates(const std::vector<sym::Expr>& exprs) {
  std::vector<int> all(exprs.size());
  for (size_t i = 0; i < exprs.size(); ++i) all[i] = static_cast<int>(i);
  const std::vector<std::string> names = sym::FreeSymbols(exprs);
  if (names.size() > kMaxSymbols) return all;
  sym::Context* ctx = nullptr;
  for (const sym::Expr& e : exprs) {
    if ((ctx = e.context()) != nullptr) break;
  }
  std::unordered_map<const sym::Node*, size_t> index;
  std::vector<int64_t> lo;
  for (const std::string& n : names) {
    const sym::Expr s = *ctx->FindSymbol(n);
    const sym::Interval r = ctx->SymbolRange(s);
    if (r.lo == sym::kNegInf) return all;
    index.emplace(s.node(), lo.size());
    lo.push_back(r.lo);
  }
  std::vector<Shifted> polys(exprs.size());
  std::vector<bool> exact(exprs.size());
  for (size_t i = 0; i < exprs.size(); ++i)
    exact[i] = Shift(exprs[i], index, lo, &polys[i]);
  // As MaximalCandidates: keep a list of candidates none of which dominates
  // another.
  std::vector<int> kept;
  for (size_t i = 0; i < exprs.size(); ++i) {
    if (exact[i]) {
      bool dominated = false;
      for (int k : kept) {
        if (exact[k] && Le(polys[i], polys[k])) {
          dominated = true;
          break;
        }
      }
      if (dominated) continue;
      kept.erase(std::remove_if(
                     kept.begin(), kept.end(),
                     [&](int k) { return exact[k] && Le(polys[k], polys[i]); }),
                 kept.end());
    }
    kept.push_back(static_cast<int>(i));
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace torchcost::nas
