// What the time fits share: a sample's seconds under fitted efficiencies, and
// how far predictions are from measurements.
#ifndef TORCHCOST_ANALYSIS_FIT_ERRORS_H_
#define TORCHCOST_ANALYSIS_FIT_ERRORS_H_

#include <algorithm>
#include <cmath>
#include <vector>

#include "torchcost/efficiency_fit.h"

namespace torchcost::analysis {

// Returns sum_c r_c / e_c + n o: `s`'s roofline seconds over `efficiency`
// plus its kernels x `kernel_overhead`.
inline double FittedSeconds(const TimingSample& s,
                            const std::array<double, kNumOpClasses>& efficiency,
                            double kernel_overhead) {
  double seconds = s.kernels * kernel_overhead;
  for (int c = 0; c < kNumOpClasses; ++c)
    seconds += s.roofline_seconds[c] / efficiency[c];
  return seconds;
}

// The root mean square and the largest of |predicted_i / measured_i - 1|.
struct RelativeErrors {
  double rms = 0, max = 0;
};
inline RelativeErrors RelativeErrorsOf(const std::vector<double>& predicted,
                                       const std::vector<double>& measured) {
  RelativeErrors e;
  double sum_sq = 0;
  for (size_t i = 0; i < predicted.size() && i < measured.size(); ++i) {
    const double rel = predicted[i] / measured[i] - 1;
    sum_sq += rel * rel;
    e.max = std::max(e.max, std::abs(rel));
  }
  if (!predicted.empty()) e.rms = std::sqrt(sum_sq / predicted.size());
  return e;
}

}  // namespace torchcost::analysis

#endif  // TORCHCOST_ANALYSIS_FIT_ERRORS_H_
