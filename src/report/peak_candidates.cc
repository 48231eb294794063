#include "report/peak_candidates.h"

namespace torchcost::report {

PeakCandidates::PeakCandidates(const Report& report)
    : training_(report.training) {
  const PeakInfo info =
      EvaluatePeak(report.training, {}, /*category_max=*/false);
  error_ = info.error;
  candidates_ = info.candidates;
  points_ = info.candidate_points;
}

std::optional<std::pair<__int128, int>> PeakCandidates::At(
    const sym::Bindings& b) const {
  std::optional<std::pair<__int128, int>> best;
  for (size_t i = 0; i < candidates_.size(); ++i) {
    auto v = sym::Evaluate128(candidates_[i], b);
    if (!v.ok()) return std::nullopt;
    if (!best || *v > best->first) best = std::make_pair(*v, points_[i]);
  }
  return best;
}

}  // namespace torchcost::report
