#include "torchcost/training.h"

#include <algorithm>

namespace torchcost {

Result<StepMode> ParseStepMode(std::string_view text) {
  if (text == "train") return StepMode::kTrain;
  if (text == "infer" || text == "inference") return StepMode::kInfer;
  return Status::InvalidArgument("unknown mode '" + std::string(text) + "'; expected train or infer");
}

Result<OptimizerKind> ParseOptimizer(std::string_view text) {
  if (text == "sgd") return OptimizerKind::kSgd;
  if (text == "sgd_momentum" || text == "momentum") return OptimizerKind::kSgdMomentum;
  if (text == "adam") return OptimizerKind::kAdam;
  if (text == "adamw") return OptimizerKind::kAdamW;
  return Status::InvalidArgument("unknown optimizer '" + std::string(text) + "'; expected sgd, sgd_momentum, adam or adamw");
}

std::string_view OptimizerName(OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::kSgd: return "sgd";
    case OptimizerKind::kSgdMomentum: return "sgd_momentum";
    case OptimizerKind::kAdam: return "adam";
    case OptimizerKind::kAdamW: return "adamw";
  }
  return "?";
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

// Keeps the expressions that may be the maximum: drops any provably <= another.
// Returns whether a <= b, deciding constants without the prover.
bool ProvenLe(sym::Context& ctx, const sym::Expr& a, const sym::Expr& b) {
  auto ca = a.AsConstant(), cb = b.AsConstant();
  if (ca && cb) return *ca <= *cb;
  return a == b || ctx.ProveLe(a, b) == sym::Truth::kTrue;
}

void AddCandidate(sym::Context& ctx, std::vector<sym::Expr>* cands, const sym::Expr& e) {
  for (const auto& c : *cands) {
    if (ProvenLe(ctx, e, c)) return;
  }
  cands->erase(std::remove_if(cands->begin(), cands->end(), [&](const sym::Expr& c) { return ProvenLe(ctx, c, e); }),
               cands->end());
  cands->push_back(e);
}

sym::Expr MaxOf(const std::vector<sym::Expr>& cands) {
  if (cands.empty()) return sym::Expr(0);
  sym::Expr m = cands[0];
  for (size_t i = 1; i < cands.size(); ++i) m = sym::Max(m, cands[i]);
  return m;
}

}  // namespace

PeakInfo EvaluatePeak(const TrainingReport& report, const sym::Bindings& bindings) {
  PeakInfo info;
  const auto& tl = report.timeline;
  if (tl.empty()) {
    info.decided = true;
    return info;
  }
  // Any symbolic total names the context; with none, every comparison is of constants.
  sym::Context* context = nullptr;
  for (const auto& p : tl) {
    if ((context = p.total.context()) != nullptr) break;
  }
  sym::Context scratch;
  sym::Context& ctx = context ? *context : scratch;
  auto bind = [&](const sym::Expr& e) { return bindings.empty() || e.IsConstant() ? e : sym::Substitute(e, bindings); };
  // Totals, bound where possible; the peak is a candidate set until one dominates.
  std::vector<sym::Expr> cands;
  std::vector<int> cand_points;
  for (size_t i = 0; i < tl.size(); ++i) {
    sym::Expr t = bind(tl[i].total);
    bool dominated = false;
    for (const auto& c : cands) {
      if (ProvenLe(ctx, t, c)) {
        dominated = true;
        break;
      }
    }
    if (dominated) continue;
    std::vector<sym::Expr> kept;
    std::vector<int> kept_points;
    for (size_t k = 0; k < cands.size(); ++k) {
      if (!ProvenLe(ctx, cands[k], t)) {
        kept.push_back(cands[k]);
        kept_points.push_back(cand_points[k]);
      }
    }
    kept.push_back(t);
    kept_points.push_back(static_cast<int>(i));
    cands.swap(kept);
    cand_points.swap(kept_points);
  }
  info.peak = MaxOf(cands);
  info.decided = cands.size() == 1;
  info.candidates = cands;
  info.candidate_points = cand_points;
  if (info.decided) {
    info.point = cand_points[0];
    for (int c = 0; c < kNumMemCategories; ++c) info.at_peak[c] = bind(tl[info.point].live[c]);
  }
  for (int c = 0; c < kNumMemCategories; ++c) {
    std::vector<sym::Expr> cc;
    for (const auto& p : tl) AddCandidate(ctx, &cc, bind(p.live[c]));
    info.category_max[c] = MaxOf(cc);
  }
  return info;
}

}  // namespace torchcost
