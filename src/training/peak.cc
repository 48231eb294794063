// The peak of a step's memory timeline: exact where the symbols' values decide
// it, else the moments that may be the peak (EvaluatePeak, training.h).
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "torchcost/training.h"

namespace torchcost {

namespace {

// The expressions as rows of coefficients over their distinct terms (each an
// atom or a product of atoms, with its interval), and their values at a few
// sample points of the symbols' domain: a <= b is then decided term by term,
// as Context::ProveLe decides it from the interval of b - a, without building
// b - a. NB: the number of distinct terms is small (a dozen for a transformer
// step), so a comparison costs a few operations however long the timeline.
class LinearRows {
 public:
  // Reads `exprs`; every symbolic one must belong to the same context.
  explicit LinearRows(const std::vector<sym::Expr>& exprs) {
    std::unordered_map<sym::Expr, int> ids;
    std::vector<sym::LinearTerm> terms;
    constants_.reserve(exprs.size());
    offsets_.reserve(exprs.size() + 1);
    offsets_.push_back(0);
    entries_.reserve(exprs.size() * 4);
    // NB: consecutive rows mostly share their terms, in the same canonical
    // order: the previous row's k-th term is tried first for the k-th.
    std::vector<int> prev_ids, row_ids;
    for (const sym::Expr& e : exprs) {
      constants_.push_back(sym::LinearTerms(e, &terms));
      const size_t first = entries_.size();
      row_ids.clear();
      for (size_t t = 0; t < terms.size(); ++t) {
        const sym::Expr& term = terms[t].term;
        const int id = t < prev_ids.size() && terms_[prev_ids[t]] == term
                           ? prev_ids[t]
                           : Id(term, ids);
        row_ids.push_back(id);
        entries_.push_back({id, terms[t].coeff});
        // Insertion sort by id: rows have a few terms.
        for (size_t k = entries_.size() - 1;
             k > first && entries_[k - 1].id > entries_[k].id; --k) {
          std::swap(entries_[k - 1], entries_[k]);
        }
      }
      offsets_.push_back(entries_.size());
      std::swap(prev_ids, row_ids);
    }
    for (const sym::Expr& t : terms_) bounds_.push_back(t.context()->Bounds(t));
    if (terms_.size() <= kDenseTerms) {
      dense_.assign(exprs.size() * terms_.size(), 0);
      for (size_t e = 0; e < exprs.size(); ++e) {
        for (size_t k = offsets_[e]; k < offsets_[e + 1]; ++k)
          dense_[e * terms_.size() + entries_[k].id] = entries_[k].coeff;
      }
    }
  }

  // Evaluates the rows `rows` (indices into exprs) at the sample points: the
  // symbols all low, each alone high, all high. With no terms, or where a term
  // cannot be evaluated or a value overflows, nothing is sampled.
  // NB: only rows sampled here may be passed to MayBeLe, Low and High.
  void Sample(const std::vector<int>& rows) {
    SamplePoints();
    if (term_values_.empty()) return;
    values_.assign(constants_.size() * num_points_, 0);
    for (int e : rows) {
      for (size_t p = 0; p < num_points_; ++p) {
        __int128 v = constants_[e];
        for (size_t k = offsets_[e]; k < offsets_[e + 1]; ++k) {
          const __int128 value = term_values_[entries_[k].id * num_points_ + p];
          __int128 term;
          // NB: an int64 coefficient times an int64 value cannot overflow 128
          // bits.
          if (values_fit_64_) {
            term = entries_[k].coeff * value;
          } else if (__builtin_mul_overflow(
                         static_cast<__int128>(entries_[k].coeff), value,
                         &term)) {
            values_.clear();
            return;
          }
          if (__builtin_add_overflow(v, term, &v)) {
            values_.clear();
            return;
          }
        }
        values_[e * num_points_ + p] = v;
      }
    }
  }

  // Returns false if exprs[a] <= exprs[b] fails at a sample point (so it cannot
  // be proven). NB: the points lie inside the symbols' ranges, so a failed
  // sample disproves a <= b.
  bool MayBeLe(size_t a, size_t b) const {
    if (values_.empty()) return true;
    const __int128* va = &values_[a * num_points_];
    const __int128* vb = &values_[b * num_points_];
    for (size_t p = 0; p < num_points_; ++p) {
      if (va[p] > vb[p]) return false;
    }
    return true;
  }

  // Returns whether the expressions were sampled (else MayBeLe always holds).
  bool sampled() const { return !values_.empty(); }
  // Returns the value of exprs[e] with every symbol at its low sample, and with
  // every one high.
  __int128 Low(size_t e) const { return values_[e * num_points_]; }
  __int128 High(size_t e) const {
    return values_[e * num_points_ + num_points_ - 1];
  }

  // Returns whether exprs[a] <= exprs[b] is proven: the lower end of the
  // interval of b - a = (constant_b - constant_a) + sum of (k_b - k_a) * term
  // is >= 0 (a positive difference times the term's lower end, a negative one
  // times its upper end). False where an end is infinite or the sum overflows.
  bool Le(size_t a, size_t b) const {
    if (!dense_.empty()) {
      // NB: the same sum in int64 over the dense rows, term by term in a
      // straight loop; where a step overflows int64, the int128 sum below
      // decides.
      const size_t n = terms_.size();
      const int64_t* ka = &dense_[a * n];
      const int64_t* kb = &dense_[b * n];
      int64_t lo;
      bool fits = !__builtin_sub_overflow(constants_[b], constants_[a], &lo);
      for (size_t t = 0; t < n && fits; ++t) {
        int64_t d, term;
        if (__builtin_sub_overflow(kb[t], ka[t], &d)) {
          fits = false;
          break;
        }
        if (d == 0) continue;
        const int64_t end = d > 0 ? bounds_[t].lo : bounds_[t].hi;
        if (end == sym::kNegInf || end == sym::kPosInf) return false;
        fits = !__builtin_mul_overflow(d, end, &term) &&
               !__builtin_add_overflow(lo, term, &lo);
      }
      if (fits) return lo >= 0;
    }
    __int128 lo = static_cast<__int128>(constants_[b]) - constants_[a];
    size_t i = offsets_[a], j = offsets_[b];
    const size_t ie = offsets_[a + 1], je = offsets_[b + 1];
    while (i < ie || j < je) {
      int id;
      __int128 d;
      if (j == je || (i < ie && entries_[i].id < entries_[j].id)) {
        id = entries_[i].id;
        d = -static_cast<__int128>(entries_[i++].coeff);
      } else if (i == ie || entries_[j].id < entries_[i].id) {
        id = entries_[j].id;
        d = entries_[j++].coeff;
      } else {
        id = entries_[i].id;
        d = static_cast<__int128>(entries_[j++].coeff) - entries_[i++].coeff;
      }
      if (d == 0) continue;
      const int64_t end = d > 0 ? bounds_[id].lo : bounds_[id].hi;
      if (end == sym::kNegInf || end == sym::kPosInf) return false;
      __int128 term;
      if (__builtin_mul_overflow(d, static_cast<__int128>(end), &term) ||
          __builtin_add_overflow(lo, term, &lo)) {
        return false;
      }
    }
    return lo >= 0;
  }

 private:
  struct Entry {
    int id;
    int64_t coeff;
  };

  // Returns the id of `term`, numbering it if new. NB: a timeline has a dozen
  // distinct terms, found faster by a scan than by hashing; `ids` indexes past
  // that.
  int Id(const sym::Expr& term, std::unordered_map<sym::Expr, int>& ids) {
    constexpr size_t kScan = 16;
    for (size_t k = 0; k < std::min(terms_.size(), kScan); ++k) {
      if (terms_[k] == term) return static_cast<int>(k);
    }
    if (terms_.size() > kScan) {
      auto it = ids.find(term);
      if (it != ids.end()) return it->second;
    }
    const int id = static_cast<int>(terms_.size());
    terms_.push_back(term);
    if (terms_.size() > kScan) ids.emplace(term, id);
    return id;
  }

  // Fills term_values_ with each term's value at each sample point (empty
  // where there are no terms or a term cannot be evaluated).
  void SamplePoints() {
    if (terms_.empty()) return;
    sym::Context& ctx = *terms_[0].context();
    const std::vector<std::string> symbols = sym::FreeSymbols(terms_);
    constexpr int64_t kLarge = int64_t{1} << 16;
    std::vector<int64_t> low, high;
    for (const auto& name : symbols) {
      const sym::Interval r = ctx.SymbolRange(*ctx.FindSymbol(name));
      low.push_back(r.lo == sym::kNegInf ? -kLarge : r.lo);
      high.push_back(r.hi == sym::kPosInf ? std::max(low.back(), kLarge)
                                          : r.hi);
    }
    std::vector<std::vector<int64_t>> points{low};
    for (size_t i = 0; i < symbols.size(); ++i) {
      points.push_back(low);
      points.back()[i] = high[i];
    }
    if (symbols.size() > 1) points.push_back(high);
    std::vector<__int128> term_values(terms_.size() * points.size());
    sym::Bindings bindings;
    for (size_t p = 0; p < points.size(); ++p) {
      for (size_t s = 0; s < symbols.size(); ++s)
        bindings[symbols[s]] = points[p][s];
      for (size_t t = 0; t < terms_.size(); ++t) {
        Result<__int128> v = sym::Evaluate128(terms_[t], bindings);
        if (!v.ok()) return;
        term_values[t * points.size() + p] = *v;
      }
    }
    values_fit_64_ =
        std::all_of(term_values.begin(), term_values.end(), [](__int128 v) {
          return v >= std::numeric_limits<int64_t>::min() &&
                 v <= std::numeric_limits<int64_t>::max();
        });
    num_points_ = points.size();
    term_values_ = std::move(term_values);
  }

  std::vector<int64_t> constants_;
  // Row e is entries_[offsets_[e], offsets_[e + 1]).
  std::vector<size_t> offsets_;
  std::vector<Entry> entries_;  // Sorted by term id within a row.
  std::vector<sym::Expr> terms_;
  std::vector<sym::Interval> bounds_;
  size_t num_points_ = 0;
  // term_values_[term id * num_points_ + p].
  std::vector<__int128> term_values_;
  bool values_fit_64_ = false;  // Every term value fits int64.
  // NB: with few distinct terms, each row's coefficients also as a dense row,
  // dense_[e * terms_.size() + term id] (0 where e lacks the term): Le then
  // needs no merge of the two rows' entries.
  static constexpr size_t kDenseTerms = 16;
  std::vector<int64_t> dense_;
  // values_[e * num_points_ + p], for the sampled rows.
  std::vector<__int128> values_;
};

// Returns the index of the first occurrence of each distinct expression of
// `exprs`, in index order.
// NB: open addressing with linear probing in a power-of-two table at most half
// full, holding indices into `exprs`: no allocation per expression.
std::vector<int> FirstOccurrences(const std::vector<sym::Expr>& exprs) {
  size_t capacity = 16;
  while (capacity < 2 * exprs.size()) capacity *= 2;
  std::vector<int> table(capacity, -1);
  std::vector<int> firsts;
  for (size_t i = 0; i < exprs.size(); ++i) {
    const sym::Expr& e = exprs[i];
    // Fibonacci hashing of the node address (or constant): node addresses are
    // aligned, so their low bits alone would crowd a few slots.
    const uint64_t key =
        reinterpret_cast<uintptr_t>(e.node()) ^
        static_cast<uint64_t>(e.IsConstant() ? *e.AsConstant() : 0);
    size_t slot = (key * 0x9E3779B97F4A7C15ull) >> 32 & (capacity - 1);
    while (table[slot] >= 0 && exprs[table[slot]] != e)
      slot = (slot + 1) & (capacity - 1);
    if (table[slot] >= 0) continue;
    table[slot] = static_cast<int>(i);
    firsts.push_back(static_cast<int>(i));
  }
  return firsts;
}

std::vector<int> MaximalDistinct(const std::vector<sym::Expr>& exprs);

// Returns the indices of the expressions that may be the maximum: it drops any
// provably <= another, and of expressions proven equal keeps the first.
// NB: the proofs are transitive (the lower bound of (c - b) + (b - a) is at
// least the sum of theirs), so the answer is the first expression of each
// class that nothing proves larger, in index order, however it is searched.
// A repeat of an expression is in its class and proves nothing it does not,
// so the search runs over each expression's first occurrence alone (a
// timeline's temporaries take a hundred distinct values over ten thousand
// points).
std::vector<int> MaximalCandidates(const std::vector<sym::Expr>& exprs) {
  // NB: constants compare exactly, so among constants only the first largest is
  // left.
  if (!exprs.empty() &&
      std::all_of(exprs.begin(), exprs.end(),
                  [](const sym::Expr& e) { return e.IsConstant(); })) {
    size_t best = 0;
    for (size_t i = 1; i < exprs.size(); ++i) {
      if (*exprs[best].AsConstant() < *exprs[i].AsConstant()) best = i;
    }
    return {static_cast<int>(best)};
  }
  const std::vector<int> firsts = FirstOccurrences(exprs);
  if (firsts.size() == exprs.size()) return MaximalDistinct(exprs);
  std::vector<sym::Expr> distinct;
  distinct.reserve(firsts.size());
  for (int i : firsts) distinct.push_back(exprs[i]);
  std::vector<int> cands = MaximalDistinct(distinct);
  // NB: firsts is increasing, so the answer stays in index order.
  for (int& c : cands) c = firsts[c];
  return cands;
}

// As MaximalCandidates, for expressions that are pairwise distinct (or not:
// the answer is the same, only slower), not all constants.
std::vector<int> MaximalDistinct(const std::vector<sym::Expr>& exprs) {
  LinearRows rows(exprs);
  // A first pass, as a stack in index order: a moment <= the last one kept
  // (earlier) is not an answer, and kept moments <= a later one (and not >=
  // it) are dropped. Most moments of a timeline go here, in linear time.
  // NB: proven by Le alone: the samples only refute faster what Le cannot
  // prove, so only the moments left are sampled.
  std::vector<int> order;
  for (size_t i = 0; i < exprs.size(); ++i) {
    bool dominated = false;
    while (!order.empty()) {
      if (rows.Le(i, order.back())) {
        dominated = true;
        break;
      }
      if (!rows.Le(order.back(), i)) break;
      order.pop_back();
    }
    if (!dominated) order.push_back(static_cast<int>(i));
  }
  rows.Sample(order);
  auto le = [&](size_t a, size_t b) {
    return rows.MayBeLe(a, b) && rows.Le(a, b);
  };
  std::vector<int> cands;
  if (!rows.sampled()) {
    // Without samples: each against every candidate so far, the last one that
    // dominated first.
    size_t hint = 0;
    for (int i : order) {
      bool dominated = hint < cands.size() && le(i, cands[hint]);
      for (size_t k = 0; k < cands.size() && !dominated; ++k) {
        if (k != hint && le(i, cands[k])) {
          dominated = true;
          hint = k;
        }
      }
      if (dominated) continue;
      cands.erase(std::remove_if(cands.begin(), cands.end(),
                                 [&](int c) { return le(c, i); }),
                  cands.end());
      cands.push_back(i);
      hint = cands.size() - 1;
    }
    return cands;
  }
  // NB: in decreasing order of the values with every symbol high, then low
  // (then by index), whatever proves x <= y comes before x, or has both values
  // equal to x's; the candidates are kept by decreasing low value, so only the
  // prefix at or above x's low value can dominate x. On a timeline whose
  // moments trade a constant for a slope (a mixture of experts' backward),
  // that prefix is short, and the search is about linear.
  struct Key {
    __int128 high, low;
    int index;
  };
  std::vector<Key> keys;
  keys.reserve(order.size());
  for (int i : order) keys.push_back({rows.High(i), rows.Low(i), i});
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.high != b.high) return a.high > b.high;
    if (a.low != b.low) return a.low > b.low;
    return a.index < b.index;
  });
  for (size_t k = 0; k < keys.size(); ++k) order[k] = keys[k].index;
  int hint = -1;
  for (int x : order) {
    const auto above =
        std::partition_point(cands.begin(), cands.end(),
                             [&](int c) { return rows.Low(c) >= rows.Low(x); });
    bool dominated = hint >= 0 && le(x, hint);
    for (auto it = cands.begin(); it != above && !dominated; ++it) {
      if (*it != hint && le(x, *it)) {
        dominated = true;
        hint = *it;
      }
    }
    if (dominated) continue;
    // Candidates with both values equal to x's come before it, and may be
    // proven <= x.
    auto last = std::remove_if(cands.begin(), above, [&](int c) {
      return rows.High(c) == rows.High(x) && rows.Low(c) == rows.Low(x) &&
             le(c, x);
    });
    const size_t at = last - cands.begin();
    cands.erase(last, above);
    cands.insert(cands.begin() + at, x);
  }
  std::sort(cands.begin(), cands.end());
  return cands;
}

sym::Expr MaxOf(const std::vector<sym::Expr>& cands) {
  if (cands.empty()) return sym::Expr(0);
  sym::Expr m = cands[0];
  for (size_t i = 1; i < cands.size(); ++i) m = sym::Max(m, cands[i]);
  return m;
}

}  // namespace

namespace {
PeakInfo EvaluatePeakOrThrow(const TrainingReport& report,
                             const sym::Bindings& bindings, bool category_max);
}  // namespace

PeakInfo EvaluatePeak(const TrainingReport& report,
                      const sym::Bindings& bindings, bool category_max) {
  try {
    return EvaluatePeakOrThrow(report, bindings, category_max);
  } catch (const sym::Error& e) {
    PeakInfo info;
    info.error =
        std::string("memory bytes overflow int64 under these bindings (") +
        e.what() + ")";
    return info;
  }
}

namespace {

PeakInfo EvaluatePeakOrThrow(const TrainingReport& report,
                             const sym::Bindings& bindings, bool category_max) {
  PeakInfo info;
  const auto& tl = report.timeline;
  if (tl.empty()) {
    info.decided = true;
    return info;
  }
  // NB: where every total (or every value of a category) is a constant, as
  // with concrete shapes, its maximum is found in one pass (the first largest,
  // as MaximalCandidates gives), without copying it out; a category's values
  // are read once per run of points that share them.
  const bool totals_constant = tl.TotalsConstant();
  size_t best = 0;
  for (size_t i = 1; i < tl.size() && totals_constant; ++i) {
    if (*tl.total(best).AsConstant() < *tl.total(i).AsConstant()) best = i;
  }
  std::array<bool, kNumMemCategories> category_constant;
  std::array<int64_t, kNumMemCategories> category_largest{};
  for (int c = 0; c < kNumMemCategories; ++c) {
    category_constant[c] = category_max && tl.RunsConstant(c);
    if (!category_constant[c]) continue;
    category_largest[c] = *tl.RunValue(c, 0).AsConstant();
    for (size_t k = 1; k < tl.NumRuns(c); ++k) {
      category_largest[c] =
          std::max(category_largest[c], *tl.RunValue(c, k).AsConstant());
    }
  }
  const CategoryBytes best_live = tl[best].live;
  if (totals_constant &&
      std::all_of(best_live.begin(), best_live.end(),
                  [](const sym::Expr& e) { return e.IsConstant(); })) {
    info.peak = tl[best].total;
    info.decided = true;
    info.candidates = {info.peak};
    info.candidate_points = {static_cast<int>(best)};
    info.point = static_cast<int>(best);
    info.at_peak = tl[best].live;
    if (!category_max) return info;
    if (std::all_of(category_constant.begin(), category_constant.end(),
                    [](bool b) { return b; })) {
      for (int c = 0; c < kNumMemCategories; ++c)
        info.category_max[c] = sym::Expr(category_largest[c]);
      return info;
    }
  }
  // NB: where every symbol is bound, evaluating is the same constant as
  // substituting, without building expressions. NB: timeline points repeat
  // their values (a category unchanged across many points): each distinct
  // expression is bound once.
  std::unordered_map<sym::Expr, sym::Expr> bound;
  // NB: the distinct values share their terms (B*S, B*S^2, ...): each term is
  // evaluated once, and a value is its constant plus each coefficient times
  // its term's value. Where a term does not evaluate, there are more than 64
  // terms, or a product reaches 2^120 (so no sum of them, in any order,
  // leaves int128), the whole value is evaluated as it is; otherwise both
  // give the same exact integer.
  constexpr __int128 kLimit = static_cast<__int128>(1) << 120;
  std::unordered_map<sym::Expr, std::optional<__int128>> term_values;
  std::vector<sym::LinearTerm> terms;
  auto evaluate = [&](const sym::Expr& e) -> Result<__int128> {
    __int128 sum = sym::LinearTerms(e, &terms);
    if (terms.size() > 64) return sym::Evaluate128(e, bindings);
    for (const sym::LinearTerm& t : terms) {
      auto [it, inserted] = term_values.try_emplace(t.term);
      if (inserted) {
        Result<__int128> v = sym::Evaluate128(t.term, bindings);
        if (v.ok()) it->second = *v;
      }
      __int128 product;
      if (!it->second ||
          __builtin_mul_overflow(*it->second, static_cast<__int128>(t.coeff),
                                 &product) ||
          product >= kLimit || product <= -kLimit)
        return sym::Evaluate128(e, bindings);
      sum += product;
    }
    return sum;
  };
  auto bind = [&](const sym::Expr& e) {
    if (bindings.empty() || e.IsConstant()) return e;
    if (auto it = bound.find(e); it != bound.end()) return it->second;
    Result<__int128> v = evaluate(e);
    sym::Expr out;
    if (v.ok() && *v >= std::numeric_limits<int64_t>::min() &&
        *v <= std::numeric_limits<int64_t>::max()) {
      out = sym::Expr(static_cast<int64_t>(*v));
    } else {
      out = sym::Substitute(e, bindings);
    }
    bound.emplace(e, out);
    return out;
  };
  // Totals, bound where possible; the peak is a candidate set until one
  // dominates.
  std::vector<sym::Expr> totals;
  totals.reserve(tl.size());
  for (size_t i = 0; i < tl.size(); ++i) totals.push_back(bind(tl.total(i)));
  std::vector<sym::Expr> cands;
  std::vector<int> cand_points;
  for (int i : MaximalCandidates(totals)) {
    cands.push_back(totals[i]);
    cand_points.push_back(i);
  }
  info.peak = MaxOf(cands);
  info.decided = cands.size() == 1;
  info.candidates = cands;
  info.candidate_points = cand_points;
  if (info.decided) {
    info.point = cand_points[0];
    for (int c = 0; c < kNumMemCategories; ++c)
      info.at_peak[c] = bind(tl[info.point].live[c]);
  }
  std::vector<sym::Expr> values;
  size_t most_runs = 0;
  for (int c = 0; c < kNumMemCategories && category_max; ++c)
    most_runs = std::max(most_runs, tl.NumRuns(c));
  values.reserve(most_runs);
  for (int c = 0; c < kNumMemCategories && category_max; ++c) {
    values.clear();
    // NB: the points' values in a row, less repeats, are the runs' values
    // bound, less repeats.
    for (size_t k = 0; k < tl.NumRuns(c); ++k) {
      sym::Expr v = bind(tl.RunValue(c, k));
      if (values.empty() || values.back() != v) values.push_back(v);
    }
    std::vector<sym::Expr> cc;
    for (int i : MaximalCandidates(values)) cc.push_back(values[i]);
    info.category_max[c] = MaxOf(cc);
  }
  return info;
}

}  // namespace

}  // namespace torchcost
