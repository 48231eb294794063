#include "torchcost/training.h"

#include <algorithm>
#include <array>
#include <limits>
#include <set>
#include <unordered_map>

namespace torchcost {

Result<StepMode> ParseStepMode(std::string_view text) {
  if (text == "train") return StepMode::kTrain;
  if (text == "infer" || text == "inference") return StepMode::kInfer;
  return Status::InvalidArgument("unknown mode '" + std::string(text) + "'; expected train, infer or generate");
}

Result<OptimizerKind> ParseOptimizer(std::string_view text) {
  if (text == "sgd") return OptimizerKind::kSgd;
  if (text == "sgd_momentum" || text == "momentum") return OptimizerKind::kSgdMomentum;
  if (text == "sgd_nesterov" || text == "nesterov") return OptimizerKind::kSgdNesterov;
  if (text == "adam") return OptimizerKind::kAdam;
  if (text == "adamw") return OptimizerKind::kAdamW;
  if (text == "adagrad") return OptimizerKind::kAdagrad;
  if (text == "rmsprop") return OptimizerKind::kRmsprop;
  if (text == "lion") return OptimizerKind::kLion;
  if (text == "adafactor") return OptimizerKind::kAdafactor;
  if (text == "adafactor_beta1") return OptimizerKind::kAdafactorBeta1;
  if (text == "adam8bit") return OptimizerKind::kAdam8bit;
  return Status::InvalidArgument("unknown optimizer '" + std::string(text) +
                                 "'; expected sgd, sgd_momentum, sgd_nesterov, adam, adamw, adagrad, rmsprop, lion, adafactor, "
                                 "adafactor_beta1 or adam8bit");
}

std::string_view OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kSgdMomentum: return "sgd_momentum";
    case OptimizerKind::kSgdNesterov: return "sgd_nesterov";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: return "adamw";
    case OptimizerKind::kAdagrad: return "adagrad";
    case OptimizerKind::kRmsprop: return "rmsprop";
    case OptimizerKind::kLion: return "lion";
    case OptimizerKind::kAdafactor: return "adafactor";
    case OptimizerKind::kAdafactorBeta1: return "adafactor_beta1";
    case OptimizerKind::kAdam8bit: return "adam8bit";
  }
  return "?";
}

bool HasForeach(OptimizerKind kind) {
  return kind != OptimizerKind::kLion && kind != OptimizerKind::kAdafactor &&
         kind != OptimizerKind::kAdafactorBeta1 && kind != OptimizerKind::kAdam8bit;
}

Status CheckOptimizerSettings(const TrainingOptions& o) {
  if (o.mode != StepMode::kTrain) return Status::Ok();
  const std::string name(OptimizerName(o.optimizer));
  if (o.paged) {
    // bitsandbytes has PagedAdam, PagedAdamW (32-bit) and PagedAdam(W)8bit among these.
    if (o.optimizer != OptimizerKind::kAdam && o.optimizer != OptimizerKind::kAdamW &&
        o.optimizer != OptimizerKind::kAdam8bit) {
      return Status::InvalidArgument("paged states are modelled for adam, adamw and adam8bit (bitsandbytes' "
                                     "PagedAdam, PagedAdamW, PagedAdam8bit); got " + name);
    }
    if (o.state_dtype != DType::kUnknown || o.master_weights || o.foreach || o.galore ||
        o.sharding.strategy != ShardStrategy::kNone) {
      return Status::InvalidArgument("paged states with a state dtype, master weights, the foreach step, GaLore "
                                     "or sharding are not modelled");
    }
  }
  if (o.state_dtype == DType::kUnknown) return Status::Ok();
  if (!IsFloatingPoint(o.state_dtype)) {
    return Status::InvalidArgument("state dtype " + std::string(DTypeName(o.state_dtype)) + " is not a float dtype");
  }
  // NB: SGD keeps no state; Adafactor's and 8-bit Adam's states have their own
  // format (float32 factored statistics, uint8 codes): a state dtype would change nothing.
  if (o.optimizer == OptimizerKind::kSgd || o.optimizer == OptimizerKind::kAdafactor ||
      o.optimizer == OptimizerKind::kAdafactorBeta1 || o.optimizer == OptimizerKind::kAdam8bit) {
    return Status::InvalidArgument("a state dtype does not apply to " + name + " (its states have their own format)");
  }
  if (o.foreach || o.galore) {
    return Status::InvalidArgument("a state dtype with " + std::string(o.foreach ? "the foreach step" : "GaLore") +
                                   " is not modelled");
  }
  return Status::Ok();
}

std::string_view MemCategoryName(MemCategory c) {
  static constexpr std::string_view kNames[] = {"param", "buffer", "grad", "act", "temp", "opt", "oth"};
  return kNames[static_cast<int>(c)];
}

std::string_view StepPhaseName(StepPhase p) {
  static constexpr std::string_view kNames[] = {"setup", "forward", "backward", "optimizer"};
  return kNames[static_cast<int>(p)];
}

namespace {

// Values of expressions at a few sample points of the symbols' domain (all 1,
// each symbol large alone, all large): a cheap necessary test for a <= b
// before the prover is asked.
class Samples {
 public:
  // Evaluates `exprs` at the sample points; with no values, nothing is filtered.
  // NB: the points lie inside the symbols' ranges, so a failed sample disproves a <= b.
  Samples(sym::Context& ctx, const std::vector<sym::Expr>& exprs) {
    // NB: constants are compared exactly without samples (ProvenLe): nothing to compile.
    if (std::all_of(exprs.begin(), exprs.end(), [](const sym::Expr& e) { return e.IsConstant(); })) return;
    const std::vector<std::string> symbols = sym::FreeSymbols(exprs);
    auto program = sym::Program::Compile(exprs, symbols);
    if (!program.ok()) return;
    constexpr int64_t kLarge = int64_t{1} << 16;
    std::vector<int64_t> low, high;
    for (const auto& name : symbols) {
      const sym::Interval r = ctx.SymbolRange(*ctx.FindSymbol(name));
      low.push_back(r.lo == sym::kNegInf ? -kLarge : r.lo);
      high.push_back(r.hi == sym::kPosInf ? std::max(low.back(), kLarge) : r.hi);
    }
    std::vector<std::vector<int64_t>> points{low};
    for (size_t i = 0; i < symbols.size(); ++i) {
      points.push_back(low);
      points.back()[i] = high[i];
    }
    if (symbols.size() > 1) points.push_back(high);
    num_points_ = points.size();
    values_.assign(exprs.size() * num_points_, 0);
    std::vector<__int128> out(exprs.size());
    for (size_t p = 0; p < points.size(); ++p) {
      if (!program->Run(points[p].data(), out.data()).ok()) {
        values_.clear();
        return;
      }
      for (size_t e = 0; e < exprs.size(); ++e) values_[e * num_points_ + p] = out[e];
    }
  }
  // Returns false if exprs[a] <= exprs[b] fails at a sample (so it cannot be proven).
  bool MayBeLe(size_t a, size_t b) const {
    if (values_.empty()) return true;
    for (size_t p = 0; p < num_points_; ++p) {
      if (values_[a * num_points_ + p] > values_[b * num_points_ + p]) return false;
    }
    return true;
  }

 private:
  size_t num_points_ = 0;
  std::vector<__int128> values_;
};

// Returns whether a <= b, deciding constants without the prover.
bool ProvenLe(sym::Context& ctx, const sym::Expr& a, const sym::Expr& b) {
  auto ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) return *ca <= *cb;
  return a == b || ctx.ProveLe(a, b) == sym::Truth::kTrue;
}

// Returns the indices of the expressions that may be the maximum: it drops any
// provably <= another. NB: each comparison first checks the samples, and the
// last dominating candidate is tried first, so the prover runs rarely.
std::vector<int> MaximalCandidates(sym::Context& ctx, const std::vector<sym::Expr>& exprs) {
  // NB: constants compare exactly, so among constants only the first largest
  // is left (the loop below gives the same, after sampling every expression).
  if (!exprs.empty() && std::all_of(exprs.begin(), exprs.end(), [](const sym::Expr& e) { return e.IsConstant(); })) {
    size_t best = 0;
    for (size_t i = 1; i < exprs.size(); ++i) {
      if (*exprs[best].AsConstant() < *exprs[i].AsConstant()) best = i;
    }
    return {static_cast<int>(best)};
  }
  const Samples samples(ctx, exprs);
  auto le = [&](size_t a, size_t b) { return samples.MayBeLe(a, b) && ProvenLe(ctx, exprs[a], exprs[b]); };
  std::vector<int> cands;
  size_t hint = 0;
  for (size_t i = 0; i < exprs.size(); ++i) {
    bool dominated = hint < cands.size() && le(i, cands[hint]);
    for (size_t k = 0; k < cands.size() && !dominated; ++k) {
      if (k != hint && le(i, cands[k])) {
        dominated = true;
        hint = k;
      }
    }
    if (dominated) continue;
    cands.erase(std::remove_if(cands.begin(), cands.end(), [&](int c) { return le(c, i); }), cands.end());
    cands.push_back(static_cast<int>(i));
    hint = cands.size() - 1;
  }
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
PeakInfo EvaluatePeakOrThrow(const TrainingReport& report, const sym::Bindings& bindings, bool category_max);
}  // namespace

PeakInfo EvaluatePeak(const TrainingReport& report, const sym::Bindings& bindings, bool category_max) {
  try {
    return EvaluatePeakOrThrow(report, bindings, category_max);
  } catch (const sym::Error& e) {
    PeakInfo info;
    info.error = std::string("memory bytes overflow int64 under these bindings (") + e.what() + ")";
    return info;
  }
}

namespace {

PeakInfo EvaluatePeakOrThrow(const TrainingReport& report, const sym::Bindings& bindings, bool category_max) {
  PeakInfo info;
  const auto& tl = report.timeline;
  if (tl.empty()) {
    info.decided = true;
    return info;
  }
  // NB: where every total (or every value of a category) is a constant, as
  // with concrete shapes, its maximum is found in one pass over the timeline
  // (the first largest, as MaximalCandidates gives), without copying it out.
  bool totals_constant = true;
  std::array<bool, kNumMemCategories> category_constant;
  category_constant.fill(category_max);
  std::array<int64_t, kNumMemCategories> category_largest{};
  size_t best = 0;
  for (size_t i = 0; i < tl.size(); ++i) {
    const sym::Expr& total = tl.total(i);
    if (totals_constant) {
      totals_constant = total.IsConstant();
      if (totals_constant && *tl.total(best).AsConstant() < *total.AsConstant()) best = i;
    }
    for (int c = 0; c < kNumMemCategories; ++c) {
      if (!category_constant[c]) continue;
      const sym::Expr& live = tl.live(i, c);
      category_constant[c] = live.IsConstant();
      if (category_constant[c] && (i == 0 || category_largest[c] < *live.AsConstant())) {
        category_largest[c] = *live.AsConstant();
      }
    }
  }
  const CategoryBytes best_live = tl[best].live;
  if (totals_constant &&
      std::all_of(best_live.begin(), best_live.end(), [](const sym::Expr& e) { return e.IsConstant(); })) {
    info.peak = tl[best].total;
    info.decided = true;
    info.candidates = {info.peak};
    info.candidate_points = {static_cast<int>(best)};
    info.point = static_cast<int>(best);
    info.at_peak = tl[best].live;
    if (!category_max) return info;
    if (std::all_of(category_constant.begin(), category_constant.end(), [](bool b) { return b; })) {
      for (int c = 0; c < kNumMemCategories; ++c) info.category_max[c] = sym::Expr(category_largest[c]);
      return info;
    }
  }
  // Any symbolic total names the context; with none, every comparison is of constants.
  sym::Context* context = nullptr;
  for (size_t i = 0; i < tl.size(); ++i) {
    if ((context = tl.total(i).context()) != nullptr) break;
  }
  sym::Context scratch;
  sym::Context& ctx = context ? *context : scratch;
  // NB: where every symbol is bound, evaluating is the same constant as substituting, without building expressions.
  // NB: timeline points repeat their values (a category unchanged across
  // many points): each distinct expression is bound once.
  std::unordered_map<sym::Expr, sym::Expr> bound;
  auto bind = [&](const sym::Expr& e) {
    if (bindings.empty() || e.IsConstant()) return e;
    if (auto it = bound.find(e); it != bound.end()) return it->second;
    Result<__int128> v = sym::Evaluate128(e, bindings);
    sym::Expr out;
    if (v.ok() && *v >= std::numeric_limits<int64_t>::min() && *v <= std::numeric_limits<int64_t>::max()) {
      out = sym::Expr(static_cast<int64_t>(*v));
    } else {
      out = sym::Substitute(e, bindings);
    }
    bound.emplace(e, out);
    return out;
  };
  // Totals, bound where possible; the peak is a candidate set until one dominates.
  std::vector<sym::Expr> totals;
  totals.reserve(tl.size());
  for (size_t i = 0; i < tl.size(); ++i) totals.push_back(bind(tl.total(i)));
  std::vector<sym::Expr> cands;
  std::vector<int> cand_points;
  for (int i : MaximalCandidates(ctx, totals)) {
    cands.push_back(totals[i]);
    cand_points.push_back(i);
  }
  info.peak = MaxOf(cands);
  info.decided = cands.size() == 1;
  info.candidates = cands;
  info.candidate_points = cand_points;
  if (info.decided) {
    info.point = cand_points[0];
    for (int c = 0; c < kNumMemCategories; ++c) info.at_peak[c] = bind(tl[info.point].live[c]);
  }
  std::vector<sym::Expr> values;
  if (category_max) values.reserve(tl.size());
  for (int c = 0; c < kNumMemCategories && category_max; ++c) {
    values.clear();
    for (size_t i = 0; i < tl.size(); ++i) {
      sym::Expr v = bind(tl.live(i, c));
      if (values.empty() || values.back() != v) values.push_back(v);
    }
    std::vector<sym::Expr> cc;
    for (int i : MaximalCandidates(ctx, values)) cc.push_back(values[i]);
    info.category_max[c] = MaxOf(cc);
  }
  return info;
}

}  // namespace

}  // namespace torchcost
