// A step's peak under any bindings, from the symbolic peak's candidate moments:
// found once with every symbol free, then a handful of expressions per
// evaluation (what comparisons and budget searches evaluate many times).
#ifndef TORCHCOST_SRC_REPORT_PEAK_CANDIDATES_H_
#define TORCHCOST_SRC_REPORT_PEAK_CANDIDATES_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "torchcost/analysis.h"
#include "torchcost/sym.h"

namespace torchcost::report {

// The moments of one step's timeline that can be its peak.
class PeakCandidates {
 public:
  // `report` must outlive this.
  explicit PeakCandidates(const Report& report);
  // Non-empty if the peak could not be analysed.
  const std::string& error() const { return error_; }
  // Returns the peak under `b` and the timeline point where it occurs, or
  // nullopt if a symbol is unbound or a value overflows.
  std::optional<std::pair<__int128, int>> At(const sym::Bindings& b) const;
  const TrainingReport& training() const { return training_; }

 private:
  const TrainingReport& training_;
  std::vector<sym::Expr> candidates_;
  std::vector<int> points_;
  std::string error_;
};

}  // namespace torchcost::report

#endif  // TORCHCOST_SRC_REPORT_PEAK_CANDIDATES_H_
